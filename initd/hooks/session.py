"""Running hooks for initd: one at a time (``run_one``), and the session phase of boot.

Session hooks run in file-name order (image directory first) before the agent starts.
``blocking: false`` ones run afterwards, one by one, in a background thread the agent
does not wait for; initd still owns them and stops them at shutdown. A failure is a
result and a log line: boot always continues (the seed's "log error and continue").
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple, Protocol

from initd import proc, statefile, users
from initd.agentfs import Place
from initd.errors import shown
from initd.hooks import runner
from initd.hooks.model import ID, Hook
from initd.hooks.status import MemoryStore, StatusStore
from initd.log import Logger
from initd.settings import Settings

if TYPE_CHECKING:
    from initd.events.trust import Trust
    from initd.supervisor.roothooks import RootHooks

TAIL_LINES = 20  # of a failed hook's output, in the warning that reports it


class RootRunner(Protocol):
    """Runs a ``run_as: root`` hook for a process that is not root: the hook service asks
    the root supervisor, which runs its boot-time copy (supervisor/roothooks.py)."""

    def run_root_hook(self, hook: Hook, ctx: HookContext,
                      cancel: threading.Event | None) -> runner.Result: ...


class HookContext(NamedTuple):
    """What running a hook needs besides the hook."""

    workspace: str
    session_id: str
    agent: users.Account  # who `run_as: user` hooks run as
    store: StatusStore
    state: Place  # initd's state directory (statefile.root): the store is in it
    secrets: tuple[str, ...]  # variables no hook may see
    grace: float
    log: Logger
    root: RootRunner | None = None  # set in an unprivileged hook service under initd
    trust: Trust | None = None  # with enforcement on: which workspace hooks may run
    # In root's supervisor, over an agent that is not root: the copies every run_as: root
    # hook runs from (taken at boot, before any hook ran), and who reads git for root.
    snapshots: RootHooks | None = None
    git_as: users.Account | None = None

    @property
    def state_problem(self) -> str | None:
        """Why state is kept in memory only (prepare_state): the service is degraded."""
        return self.store.reason if isinstance(self.store, MemoryStore) else None


def prepare_state(ctx: HookContext) -> str | None:
    """Make the session's state directories (hook status and logs, session records,
    events) and prove one can be written: made by root at boot, for the agent, because a
    fresh volume is root's. None, or what cannot be written and how to fix it: a
    ``--read-only`` root, a volume the agent cannot write. Hooks and the agent run all
    the same; only what they leave on disk is lost (the service's health says
    "degraded")."""
    try:
        for place in (ctx.store.output, ctx.state.child("sessions"),
                      ctx.state.child(ctx.session_id, "events")):
            place.open(create=True).close()
        with ctx.store.place.open() as directory:
            directory.write(".initd-probe", b"")
            directory.remove(".initd-probe")
    except OSError as err:
        return (f"initd's state directory {ctx.state.path} cannot be written "
                f"({err.strerror or err}): hook results are logged and kept in memory "
                "only (a restart forgets them). Mount a volume there"
                f" (podman run -v NAME:{ctx.state.path}) or set "
                "--state-dir/INITD_STATE_DIR to a directory the agent can write")
    return None


def session_id(config: Settings, log: Logger) -> str:
    """--session-id, INITD_SESSION_ID or SESSION_ID; else a new one, logged."""
    if config.session_id:
        return config.session_id
    generated = os.urandom(6).hex()
    log.info("no session id given (--session-id, SESSION_ID): generated one",
             session_id=generated)
    return generated


def context(config: Settings, agent: users.Account | None, log: Logger,
            session: str | None = None, *,
            recover: Callable[[dict[str, Any]], bool] | None = None) -> HookContext:
    """The context for running hooks. With ``recover``, the state directories are made
    (``state_problem`` says why they cannot be), and hooks left ``running`` by a
    process that died (``recover(entry)`` says whether it did) are recovered first:
    boot recovers every one (nothing of initd's runs yet), a (re)started hook service
    those whose runner is gone; a commit or a CLI run none, as a background session hook
    may really be running."""
    agent = agent or users.current()
    session = session or session_id(config, log)
    owner = (agent.uid, agent.gid) if os.geteuid() == 0 else None
    state = statefile.root(agent.home, config.state_dir, owner)
    store = StatusStore.for_session(state, session)
    trust = None
    if config.trust:
        from initd.events.trust import Trust

        trust = Trust(config.trust_file, enforce=True, image_dir=config.hooks_dir)
    ctx = HookContext(workspace=config.workspace, session_id=session, agent=agent,
                      store=store, state=state, secrets=config.secret, grace=config.grace, log=log,
                      trust=trust)
    if recover is not None:  # a process that lives with the session: boot, the service
        problem = prepare_state(ctx)  # (its callers say it)
        if problem is not None:  # kept in memory, for this process's life
            return ctx._replace(store=MemoryStore(store.place, problem))
        recover_interrupted(ctx, recover)
    return ctx


def any_runner(entry: dict[str, Any]) -> bool:
    """For ``recover`` at boot: whoever ran it, it is not running any more."""
    return True


def runner_gone(entry: dict[str, Any]) -> bool:
    """For ``recover`` in a process started later: the runner (its pid and its start
    time: a pid alone may have been reused) no longer exists."""
    pid, started = entry.get("runner"), entry.get("runnerStart")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return True
    now = proc.start_ticks(pid)
    return now is None or (isinstance(started, int) and now != started)


def recover_interrupted(ctx: HookContext, gone: Callable[[dict[str, Any]], bool]) -> list[str]:
    """Hooks whose runner died mid-run: recorded as failed (file hooks queued again).
    The process group each left behind is stopped only by a process of the tree's own
    user (the hook service, after its predecessor): root never signals a group it read
    from a file the agent can write (invariant 8; the supervisor stops a dead service's
    hooks by the session it started, proc.stop_session)."""
    ours = ctx.store.owner is None or ctx.store.owner[0] == os.geteuid()
    recovered: list[str] = []
    try:
        entries = ctx.store.recover(runner_gone=gone)
    except Exception as err:  # a link planted on the way, a full disk, a bug of ours in
        # reading what the agent wrote: the hooks and the agent still run (invariant 7)
        ctx.log.warning("hook status not recovered", status=ctx.store.path,
                        error=f"{type(err).__name__}: {err}")
        return recovered
    for entry in entries:
        pgid, hook_id = entry.get("pgid"), entry.get("hookId")
        stopped = ours and isinstance(pgid, int) and not isinstance(pgid, bool) and \
            proc.stop_leftover_group(pgid, entry.get("pgidStart"), ctx.grace)
        ctx.log.warning("hook was still running when the process running it stopped: "
                        "recorded as failed", hook=hook_id if isinstance(hook_id, str)
                        and ID.fullmatch(hook_id) else shown(hook_id), status=ctx.store.path,
                        stopped_group=pgid if stopped else None)
        recovered.append(str(hook_id))
    return recovered


def account_for(hook: Hook, ctx: HookContext) -> users.Account:
    """Only the exact ``run_as: root`` (validated) keeps initd's own user and its HOME."""
    return ctx.agent if hook.run_as == "user" else users.current()


def environment(hook: Hook, ctx: HookContext,
                more: dict[str, str] | None = None) -> dict[str, str]:
    extra = {"DISCOBOT_SESSION_ID": ctx.session_id, "DISCOBOT_WORKSPACE": ctx.workspace,
             "DISCOBOT_HOOK_TYPE": hook.type, **(more or {})}
    return proc.environment(os.environ, account_for(hook, ctx), extra, remove=ctx.secrets)


ROOT_TYPES = ("session", "file")  # a root pre-commit hook runs as whoever commits


def run_one(hook: Hook, ctx: HookContext, *, stdin: bytes | None = None,
            cancel: threading.Event | None = None,
            echo: Callable[[str], None] | None = None,
            extra_env: dict[str, str] | None = None,
            recorder: Recorder | None = None) -> runner.Result:
    """Run ``hook`` now, record it in status.json (now, or by ``recorder`` while the
    next hook runs), log its output and outcome.

    A ``run_as: root`` hook of an agent that is not root runs from root's copy, taken
    at boot before any hook or the agent ran, and ``--trust`` judges exactly those bytes:
    the agent may rewrite the workspace's file at any moment (invariant 8)."""
    original = hook.path
    content = None
    if hook.run_as == "root" and hook.type in ROOT_TYPES:
        if ctx.root is not None:
            return ctx.root.run_root_hook(hook, ctx, cancel)  # root records, logs, runs it
        if ctx.snapshots is not None:
            copy = ctx.snapshots.copy_of(hook)
            if isinstance(copy, str):
                return refuse(hook, ctx, copy)
            hook, original, content = copy.hook, copy.original, copy.content
        elif os.geteuid() != 0:
            return refuse(hook, ctx, f"run_as: root hook {shown(hook.id)}: this process is "
                                     "not root and has no root supervisor to ask")
    if ctx.trust is not None:
        refusal = ctx.trust.refusal(hook._replace(path=original), content)
        if refusal is not None:
            return refuse(hook, ctx, refusal)
    log = ctx.log.bind(hook=hook.id)
    out, log_path = new_log(hook, ctx)
    result = runner.run(
        hook.path, env=environment(hook, ctx, {"DISCOBOT_HOOK_FILE": original,
                                               **(extra_env or {})}),
        cwd=ctx.workspace, account=account_for(hook, ctx), timeout=hook.timeout, log=out,
        log_path=log_path, stdin=stdin, grace=ctx.grace,
        on_line=echo or (lambda line: log.info(f"[{hook.name}] {line}")),
        cancel=cancel, on_running=lambda child: _record_start(ctx, hook, child, log))
    if result.log_error is not None and ctx.state_problem is None:
        log.warning("hook's log not written", log=result.output_path, error=result.log_error)
    if recorder is not None:
        recorder.submit(hook, result)
    else:
        _record(ctx, hook, result, log)
    if result.ok:
        log.info("hook succeeded", duration_ms=round(result.duration * 1000, 1))
    elif result.cancelled:
        log.info("hook stopped: initd is shutting down", log=result.output_path)
    else:
        log.warning("hook failed", name=hook.name, exit_code=result.exit_code,
                    timed_out=result.timed_out, signal=result.signal,
                    log=result.output_path, error=result.exec_error,
                    output_tail=_tail(result))
    return result


def new_log(hook: Hook, ctx: HookContext) -> tuple[BinaryIO | OSError, str]:
    """The hook's new log file, or why there is none: the hook runs all the same."""
    try:
        return ctx.store.new_log(hook.id)
    except OSError as err:
        return err, ctx.store.output_path(hook.id)


def _record(ctx: HookContext, hook: Hook, result: runner.Result, log: Logger) -> None:
    """The result in status.json. A full disk, a read-only state directory (said once,
    at boot: ctx.state_problem), the agent's state made a link: the result stands."""
    try:
        ctx.store.finished(hook, result)
    except OSError as err:
        if ctx.state_problem is None:
            log.warning("hook status not recorded", status=ctx.store.path, error=str(err))


class Recorder:
    """The blocking session hooks' results, written while the next hook runs.

    Each result is one durable write of status.json (read, change, fsync, rename: about
    as long as a trivial hook takes), so written inline they doubled the session phase.
    Here one thread writes them, in order; results that queued up meanwhile go in one
    write. ``close`` waits until every result is written, so the agent starts with all
    of them durable; a crash before that loses only results of hooks that every boot
    runs again. Without a thread (a pids limit), each is written inline."""

    def __init__(self, ctx: HookContext) -> None:
        self.ctx = ctx
        self.queue: list[tuple[Hook, runner.Result]] = []
        self.ready = threading.Condition()
        self.closed = False
        self.thread: threading.Thread | None = threading.Thread(
            target=self._run, name="session-hook-results", daemon=True)
        try:
            self.thread.start()
        except RuntimeError:
            self.thread = None

    def submit(self, hook: Hook, result: runner.Result) -> None:
        if self.thread is None:
            _record(self.ctx, hook, result, self.ctx.log.bind(hook=hook.id))
            return
        with self.ready:
            self.queue.append((hook, result))
            self.ready.notify()

    def _run(self) -> None:
        while True:
            with self.ready:
                while not self.queue and not self.closed:
                    self.ready.wait()
                batch, self.queue = self.queue, []
            if not batch:
                return  # closed, and all written
            try:
                self.ctx.store.finished_all(batch)
            except Exception as err:  # OSError: a full disk, a link the agent planted...
                if self.ctx.state_problem is None:  # (and a bug of ours never loses the
                    self.ctx.log.warning(  # thread: the next batch is written all the same)
                        "hook status not recorded", status=self.ctx.store.path,
                        hooks=[hook.id for hook, _ in batch], error=str(err))

    def close(self) -> None:
        """Return once every result submitted is written (or said not to be)."""
        if self.thread is None:
            return
        with self.ready:
            self.closed = True
            self.ready.notify()
        self.thread.join()


def _record_start(ctx: HookContext, hook: Hook, child: proc.Child, log: Logger) -> None:
    """``running`` in status.json; a state the agent broke (a link swapped in, its lock
    held) costs that record and a line, never the supervision of a running hook."""
    try:
        ctx.store.started(hook, child.pgid)
    except OSError as err:
        if ctx.state_problem is None:
            log.warning("hook status not recorded", status=ctx.store.path, error=str(err))


def refuse(hook: Hook, ctx: HookContext, reason: str) -> runner.Result:
    """A hook initd will not run: a failed result, recorded and logged like any other
    (never a silent skip)."""
    ctx.log.warning("hook not run", hook=hook.id, reason=reason)
    out, log_path = new_log(hook, ctx)
    result = runner.refused(out, log_path, reason)
    _record(ctx, hook, result, ctx.log)
    return result


def _tail(result: runner.Result) -> str:
    text = (result.tail or result.head).decode(errors="replace")
    return "\n".join(text.rstrip("\n").splitlines()[-TAIL_LINES:])


class Background:
    """The ``blocking: false`` session hooks, one after another, off the boot path."""

    def __init__(self, hooks: Sequence[Hook], ctx: HookContext) -> None:
        self.cancel = threading.Event()
        self.results: dict[str, runner.Result] = {}
        self.thread = threading.Thread(target=self._run, args=(hooks, ctx),
                                       name="background-session-hooks", daemon=True)
        try:
            self.thread.start()
        except RuntimeError as err:  # no thread (a pids cgroup at its limit): they run
            # now, before the agent, rather than never (invariant 7: no hook lost)
            ctx.log.warning("background session hooks run before the agent: cannot start "
                            "a thread (a pids limit?)", error=str(err))
            self._run(hooks, ctx)

    def _run(self, hooks: Sequence[Hook], ctx: HookContext) -> None:
        for hook in hooks:
            if self.cancel.is_set():
                break
            try:
                self.results[hook.id] = run_one(hook, ctx, cancel=self.cancel)
            except Exception as err:  # a hook can never take initd down (invariant 7)
                ctx.log.error("background session hook could not run", hook=hook.id,
                              error=repr(err))

    def stop(self) -> None:
        """Stop the hook that is running (TERM, grace, KILL to its group); skip the rest."""
        self.cancel.set()
        if self.thread.ident is not None:  # (never started: they ran inline)
            self.thread.join()


def run_session_hooks(hooks: Sequence[Hook], ctx: HookContext,
                      cancel: threading.Event | None = None) -> Background | None:
    """Step 3 of boot. Returns the background runner, if any hook needs one.

    ``cancel`` is set when initd is told to stop: the running hook's group is stopped,
    the rest are skipped, and nothing is started in the background."""
    session = [hook for hook in hooks if hook.type == "session"]
    if not session:
        return None
    ctx.log.info("session hooks", count=len(session))
    failed = 0
    recorder = Recorder(ctx)
    try:
        for hook in (h for h in session if h.blocking):
            if cancel is not None and cancel.is_set():
                ctx.log.info("session hook skipped: initd is stopping", hook=hook.id)
                continue
            try:
                failed += not run_one(hook, ctx, cancel=cancel, recorder=recorder).ok
            except Exception as err:  # e.g. the status directory cannot be written
                failed += 1
                ctx.log.error("session hook could not run", hook=hook.id, error=repr(err))
    finally:
        recorder.close()  # every result written before the agent starts
    ctx.log.info("session hooks done", failed=failed)
    background = [hook for hook in session if not hook.blocking]
    if not background or (cancel is not None and cancel.is_set()):
        return None
    return Background(background, ctx)
