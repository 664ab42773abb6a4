"""Boot's dev container phase: devcontainer.json's lifecycle commands, run by initd as a
dev container tool runs them (https://containers.dev/implementors/json_reference/
#lifecycle-scripts), with initd's rules for who runs them and what is trusted.

- ``onCreateCommand``, ``updateContentCommand`` and ``postCreateCommand`` run once per
  container: done is a marker in initd's state, kept for this container's identity
  (container_identity), so a restart of initd in the same container skips them and a
  new container sharing the state volume does not. ``postStartCommand`` runs at every
  start.
- The agent starts once ``waitFor``'s stage (default ``updateContentCommand``) and every
  stage before it are done; the later stages run in order in a background thread that
  initd owns and stops.
- A failed stage is logged and recorded in status.json like a failed session hook; the
  stages after it do not run (the specification: "if one of the lifecycle scripts fails,
  any subsequent scripts will not be executed"), and the agent starts all the same.
- Each command runs in a session of its own. What it leaves running (``nohup x &``) keeps
  running after it exits, its output still read into the command's capped log (so it
  never writes into a closed pipe), and is stopped with initd: TERM to every process
  left in those sessions, the grace, KILL.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Sequence
from typing import IO

from initd import agentfs, proc, users
from initd.clock import now_iso
from initd.hooks import devcontainer, runner
from initd.hooks.context import HookContext
from initd.hooks.devcontainer import Command, Config, Stage
from initd.hooks.output import Output
from initd.hooks.run import new_log, record, record_start, refuse
from initd.procspec import HOOK_ENV
from initd.statefile import StateFile

MARKERS = "devcontainer"  # the markers' directory in initd's state
LINGER_CLOSE = 0.5  # seconds the output of stopped daemons is still read at the end


class Keeper:
    """The sessions the commands ran in (stopped at the end) and the output pipes their
    daemons still hold (read on, in one thread, into each command's capped log)."""

    def __init__(self, ctx: HookContext, uid: int) -> None:
        self.ctx = ctx
        self.uid = uid  # who the commands run as: only that user's processes are stopped
        self.sessions: list[int] = []  # the commands' session ids, from root's memory
        self.pipes: dict[int, tuple[IO[bytes], Output]] = {}
        self.lock = threading.Lock()
        self.wake_r, self.wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.thread: threading.Thread | None = None
        self.closing = False

    def started(self, child: proc.Child) -> None:
        with self.lock:
            self.sessions.append(child.pid)  # the leader of its own session: its id

    def linger(self, stream: IO[bytes], out: Output) -> None:
        with self.lock:
            self.pipes[stream.fileno()] = (stream, out)
            if self.thread is None:
                self.thread = threading.Thread(target=self._read, name="devcontainer-output",
                                               daemon=True)
                try:
                    self.thread.start()
                except RuntimeError as err:  # a pids limit: its daemons get EPIPE
                    self.thread = None
                    self.ctx.log.warning("devcontainer: output of what a command left "
                                         "running is not read (cannot start a thread)",
                                         error=str(err))
                    self._close(stream.fileno())
                    return
        self._wake()

    def _wake(self) -> None:
        try:
            os.write(self.wake_w, b".")
        except BlockingIOError:
            pass  # (woken already: the pipe is full of wake-ups)

    def _read(self) -> None:
        """Until ``stop``: read every pipe, close each at its end; then LINGER_CLOSE more
        for what the stopped daemons last wrote, and close the rest (a daemon that left
        its session may hold one for good)."""
        until: float | None = None
        while True:
            with self.lock:
                fds = list(self.pipes)
                if self.closing and until is None:
                    until = time.monotonic() + LINGER_CLOSE
                if until is not None and (not fds or time.monotonic() >= until):
                    for fd in fds:
                        self._close(fd)
                    return
            wait = None if until is None else max(0.0, until - time.monotonic())
            ready = proc.wait_fds([self.wake_r, *fds], wait)
            if self.wake_r in ready:
                os.read(self.wake_r, 4096)
            for fd in (fd for fd in ready if fd != self.wake_r):
                chunk = os.read(fd, 65536)
                with self.lock:
                    if not chunk:
                        self._close(fd)
                    elif fd in self.pipes:
                        self.pipes[fd][1].add(chunk)

    def _close(self, fd: int) -> None:
        stream, out = self.pipes.pop(fd)
        stream.close()
        out.close()

    def stop(self, grace: float) -> int:
        """Stop every process left in the commands' sessions (TERM, ``grace``, KILL, all
        sessions at once). Returns how many there were."""
        counts: list[int] = []
        threads = []
        for sid in self.sessions:
            thread = threading.Thread(target=lambda s=sid: counts.append(
                proc.stop_session(s, self.uid, grace)), name="devcontainer-stop",
                daemon=True)
            try:
                thread.start()
                threads.append(thread)
            except RuntimeError:
                counts.append(proc.stop_session(sid, self.uid, grace))
        for thread in threads:
            thread.join()
        return sum(counts)

    def close(self) -> None:
        """Stop reading the daemons' output (what they last wrote: LINGER_CLOSE more)."""
        with self.lock:
            self.closing = True
        self._wake()
        if self.thread is not None:
            self.thread.join()  # (at most LINGER_CLOSE: it closes what is left)


class Lifecycle:
    """One boot's lifecycle commands: the waited stages now, the rest in the background;
    ``stop`` ends whatever still runs, and what the commands left running."""

    def __init__(self, config: Config, ctx: HookContext, account: users.Account | None,
                 env: dict[str, str], changes: dict[str, str | None],
                 variables: devcontainer.Substitution) -> None:
        self.config = config
        self.ctx = ctx
        self.account = account  # None: nobody may run them (said already)
        self.env = env  # the commands' own
        self.changes = changes  # containerEnv and remoteEnv, for the agent too
        self.variables = variables  # ${…} in the commands
        self.keeper = Keeper(ctx, account.uid if account is not None else os.getuid())
        self.cancel = threading.Event()
        self.thread: threading.Thread | None = None
        self.failed: str | None = None  # the stage that failed: the later ones do not run
        self.markers = Markers(ctx, config)
        self.env_trusted = self._env_trusted()

    def agent_env(self, env: dict[str, str]) -> dict[str, str]:
        """The agent's environment with the file's containerEnv and remoteEnv: the agent
        is what a dev container tool would start in the container."""
        return devcontainer.apply(env, self.changes) if self.env_trusted else env

    def run_waited(self, stop: threading.Event | None) -> None:
        """Every stage up to waitFor's, in order, now; ``stop`` (initd is stopping)
        cancels the running command and skips the rest."""
        for stage in self.config.stages:
            if not self.config.waited(stage.key):
                break
            if stop is not None and stop.is_set():
                return
            try:
                self._stage(stage, stop)
            except Exception as err:  # never takes initd down (invariant 7)
                self.failed = stage.key
                self.ctx.log.error("devcontainer stage could not run", stage=stage.key,
                                   error=repr(err))

    def start_background(self) -> None:
        """The stages after waitFor's, in order, in a thread the agent does not wait for."""
        later = [s for s in self.config.stages if not self.config.waited(s.key)]
        if not later:
            return
        self.thread = threading.Thread(target=self._background, args=(later,),
                                       name="devcontainer-stages", daemon=True)
        try:
            self.thread.start()
        except RuntimeError as err:  # a pids limit: run them now rather than never
            self.thread = None
            self.ctx.log.warning("devcontainer: the later stages run before the agent: "
                                 "cannot start a thread", error=str(err))
            self._background(later)

    def _background(self, stages: Sequence[Stage]) -> None:
        for stage in stages:
            if self.cancel.is_set():
                return
            try:
                self._stage(stage, self.cancel)
            except Exception as err:  # never takes initd down (invariant 7)
                self.failed = stage.key
                self.ctx.log.error("devcontainer stage could not run", stage=stage.key,
                                   error=repr(err))

    def stop(self) -> None:
        """The stages not begun skipped; the running command and everything left in the
        commands' sessions stopped together (TERM, grace, KILL): one grace, not two (the
        running command's session is among them)."""
        self.cancel.set()
        counts: list[int] = []
        stopper = threading.Thread(target=lambda: counts.append(
            self.keeper.stop(self.ctx.grace)), name="devcontainer-stop", daemon=True)
        try:
            stopper.start()
        except RuntimeError:  # no thread (a pids limit): one after the other
            stopper.run()  # (the stage's command is stopped by its session, then joined)
        if self.thread is not None:
            self.thread.join()
        if stopper.ident is not None:
            stopper.join()
        left = sum(counts)
        self.keeper.close()
        if left:
            self.ctx.log.info("devcontainer: stopped what its commands left running",
                              processes=left)

    def _stage(self, stage: Stage, cancel: threading.Event | None) -> bool:
        log = self.ctx.log.bind(stage=stage.key, file=self.config.path)
        if self.failed is not None:
            log.warning(f"devcontainer {stage.key} not run: {self.failed} failed")
            return False
        if stage.key in devcontainer.ONCE and self.markers.done(stage.key):
            log.info(f"devcontainer {stage.key}: already ran in this container")
            return True
        refusal = self._refusal(stage)
        results = [refuse(c.hook(self.config), self.ctx, refusal) for c in stage.commands] \
            if refusal is not None else self._run_all(stage, cancel)
        if any(r.cancelled for r in results):
            return False
        if all(r.ok for r in results):
            if stage.key in devcontainer.ONCE:
                self.markers.mark(stage.key)
            return True
        self.failed = stage.key
        log.warning(f"devcontainer {stage.key} failed: the later stages do not run "
                    "(the agent starts all the same)",
                    failed=[c.label for c, r in zip(stage.commands, results, strict=True)
                            if not r.ok])
        return False

    def _refusal(self, stage: Stage) -> str | None:
        if self.account is None:
            return "no user to run it as (see the warning about the file's user)"
        trust = self.ctx.trust
        if trust is None:
            return None
        entry = next(e for e in devcontainer.trust_entries(self.config)
                     if e.key.endswith("#" + stage.key))
        return None if trust.allows(entry) else trust.why_not(entry)

    def _env_trusted(self) -> bool:
        trust = self.ctx.trust
        entries = [e for e in devcontainer.trust_entries(self.config)
                   if e.key.endswith("#environment")]
        if trust is None or not entries:
            return True
        if trust.allows(entries[0]):
            return True
        self.ctx.log.warning("devcontainer containerEnv and remoteEnv not given to the "
                             "agent", reason=trust.why_not(entries[0]))
        return False

    def _run_all(self, stage: Stage, cancel: threading.Event | None
                 ) -> list[runner.Result]:
        """The stage's commands: one, or all of the object form's at once."""
        results: list[runner.Result | None] = [None] * len(stage.commands)

        def one(i: int) -> None:
            try:
                results[i] = self._run(stage.commands[i], cancel)
            except Exception as err:  # a bug of ours: that command failed, not initd
                self.ctx.log.error("devcontainer command could not run",
                                   command=stage.commands[i].label, error=repr(err))
                results[i] = runner.refused(err if isinstance(err, OSError) else
                                            OSError(repr(err)), "", f"not run: {err!r}")

        threads = []
        for i in range(len(stage.commands)):
            thread = threading.Thread(target=one, args=(i,), daemon=True,
                                      name=f"devcontainer-{stage.key}")
            try:
                thread.start()
                threads.append(thread)
            except RuntimeError:  # (a pids limit: one after the other)
                one(i)
        for thread in threads:
            thread.join()
        return [r for r in results if r is not None]

    def _run(self, command: Command, cancel: threading.Event | None) -> runner.Result:
        hook = command.hook(self.config)
        log = self.ctx.log.bind(hook=hook.id)
        out, log_path = new_log(hook, self.ctx)
        argv = command.argv(self.variables)
        result = runner.run(
            argv[0], argv=argv, env=self.env, cwd=self.config.workspace,
            account=self.account, timeout=self.config.timeout, log=out, log_path=log_path,
            grace=self.ctx.grace, limits=self.config.limits.over(self.ctx.limits),
            on_line=lambda line: log.info(f"[{command.label}] {line}"), cancel=cancel,
            on_running=lambda child: record_start(self.ctx, hook, child, log),
            keeper=self.keeper)
        record(self.ctx, hook, result, log)
        if result.ok:
            log.info(f"devcontainer {command.label} succeeded",
                     duration_ms=round(result.duration * 1000, 1))
        elif result.cancelled:
            log.info(f"devcontainer {command.label} stopped: initd is shutting down")
        else:
            log.warning(f"devcontainer {command.label} failed", exit_code=result.exit_code,
                        timed_out=result.timed_out, signal=result.signal,
                        limit=result.limit, log=result.output_path, error=result.exec_error)
        return result


class Markers:
    """Which once-per-container stages are done, in initd's state
    (``<state>/devcontainer/lifecycle.json``): per devcontainer.json, for one container
    identity; a marker of another container counts for nothing. The file is the agent's
    when the agent is not root, and so are the commands it can make initd skip: a forged
    marker skips only what would run as the agent anyway."""

    def __init__(self, ctx: HookContext, config: Config) -> None:
        self.ctx = ctx
        self.file = StateFile(ctx.state.child(MARKERS), "lifecycle.json",
                              lambda: {"version": 1, "configs": {}})
        self.key = config.path
        self.container = container_identity()
        self.warned = False

    def done(self, stage: str) -> bool:
        try:
            mine = self.file.read().get("configs", {}).get(self.key)
        except (OSError, AttributeError):
            return False
        if not isinstance(mine, dict) or mine.get("container") != self.container:
            return False
        done = mine.get("done")
        return isinstance(done, dict) and stage in done

    def mark(self, stage: str) -> None:
        def change(data: dict[str, object]) -> None:
            configs = data.get("configs")
            if not isinstance(configs, dict):
                configs = data["configs"] = {}
            mine = configs.get(self.key)
            if not isinstance(mine, dict) or mine.get("container") != self.container \
                    or not isinstance(mine.get("done"), dict):
                mine = configs[self.key] = {"container": self.container, "done": {}}
            mine["done"][stage] = now_iso()
        try:
            self.file.update(change)
        except OSError as err:
            if not self.warned:
                self.warned = True
                self.ctx.log.warning("devcontainer: a stage done is not recorded: it runs "
                                     "again at the next start", file=self.file.path,
                                     error=str(err))


def container_identity() -> str:
    """Who this container is, as far as it can tell: podman's ``/run/.containerenv``
    id, else what the runtime mounted on /etc/hostname (Docker's and podman's are in a
    directory named by the container's id; Kubernetes' by the pod's), else the host name
    and the kernel's boot id. The same across restarts of one container; different for
    a new one (except, in the last case, one with the same host name in the same boot)."""
    text = _read_text("/run/.containerenv")
    match = re.search(r'^id="([^"]+)"', text, re.MULTILINE)
    if match:
        return f"containerenv:{match[1]}"
    for line in _read_text("/proc/self/mountinfo").splitlines():
        fields = line.split(" ")
        if len(fields) > 4 and fields[4] == "/etc/hostname" and fields[3] != "/":
            return f"hostname-mount:{fields[3]}"
    boot = _read_text("/proc/sys/kernel/random/boot_id").strip()
    return f"host:{os.uname().nodename}:{boot}"


def _read_text(path: str) -> str:
    try:
        data, _ = agentfs.read_regular(path, 2**20, whole=False)
    except OSError:
        return ""
    return data.decode(errors="replace")


def prepare(config: Config, ctx: HookContext) -> Lifecycle | None:
    """The phase for this file, or None when it has errors (each said: nothing of it
    runs, and the agent starts without its environment)."""
    log = ctx.log.bind(file=config.path)
    for problem in config.problems:  # (a key initd does not run is said by default too)
        report = log.error if problem.severity == devcontainer.ERROR else log.warning \
            if problem.severity == devcontainer.WARNING or problem.key in config.ignored \
            else log.info
        report(f"devcontainer: {problem}")
    if config.errors:
        log.error("devcontainer.json has errors: none of its commands run")
        return None
    chosen = devcontainer.runner_for(config, ctx.agent)
    if chosen.warning is not None:
        log.warning(f"devcontainer: {chosen.warning}")
    base = proc.environment(os.environ, None, remove=ctx.secrets)  # never a secret
    container, changes = devcontainer.environment(config, base)
    env = devcontainer.apply(proc.environment(
        os.environ, chosen.account, {"DISCOBOT_SESSION_ID": ctx.session_id,
                                     "DISCOBOT_WORKSPACE": ctx.workspace,
                                     "DISCOBOT_HOOK_TYPE": devcontainer.KIND}), changes)
    env.update(HOOK_ENV)
    for name in ctx.secrets:
        env.pop(name, None)
    ctx.log.info("devcontainer", file=config.path, wait_for=config.wait_for,
                 stages=[s.key for s in config.stages],
                 user=chosen.account.name if chosen.account else None)
    return Lifecycle(config, ctx, chosen.account, env, changes,
                     devcontainer.Substitution(base, config.workspace, container))
