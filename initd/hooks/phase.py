"""Boot's session phase: session hooks in file-name order (image directory first) before
the agent starts. ``blocking: false`` ones run afterwards, one by one, in a background
thread the agent does not wait for; initd still owns them and stops them at shutdown. A
failure is a result and a log line: boot always continues (the specification's "log
error and continue")."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence

from initd.config import paths
from initd.errors import shown
from initd.hooks.context import HookContext
from initd.hooks.launch import record, refuse, run_one
from initd.hooks.model import Hook
from initd.process import rootleftovers, runner

GATHER = 0.05  # seconds a write of results waits for the ones that follow


class Recorder:
    """The blocking session hooks' results, written while the next hook runs.

    Each result is one durable write of status.json (read, change, fsync, rename: about
    as long as a trivial hook takes), so written inline they doubled the session phase.
    Here one thread writes them, in order, and a write waits GATHER for the results
    that follow (a person watching a long phase sees each within GATHER of its hook's
    end; fifty trivial hooks make two writes, not fifty, whose CPU the next hooks' start
    waited for: bench/README.md). ``close`` ends the wait and returns once every result
    is written, so the agent starts with all of them durable; a crash before that loses
    only results of hooks that every boot runs again. Without a thread (a pids limit),
    each is written inline."""

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
            record(self.ctx, hook, result, self.ctx.log.bind(hook=hook.id))
            return
        with self.ready:
            self.queue.append((hook, result))
            self.ready.notify()

    def _run(self) -> None:
        while True:
            with self.ready:
                while not self.queue and not self.closed:
                    self.ready.wait()
                until = time.monotonic() + GATHER
                while not self.closed and (left := until - time.monotonic()) > 0:
                    self.ready.wait(left)  # (the next results join this write)
                batch, self.queue = self.queue, []
            if not batch:
                return  # closed, and all written
            said = self.ctx.state_problem
            try:
                self.ctx.store.finished_all(batch)
            except Exception as err:  # OSError: a full disk, a link the agent planted...
                if said is None:  # (and a bug of ours never loses the thread: the next
                    self.ctx.log.warning(  # batch is written all the same)
                        "hook status not recorded" if self.ctx.state_problem is None else
                        "hook status kept in memory: written when the disk allows",
                        status=self.ctx.store.path, hooks=[hook.id for hook, _ in batch],
                        error=str(err))

    def close(self) -> None:
        """Return once every result submitted is written (or said not to be)."""
        if self.thread is None:
            return
        with self.ready:
            self.closed = True
            self.ready.notify()
        self.thread.join()


class BackgroundHooks:
    """The ``blocking: false`` session hooks, one after another, off the boot path."""

    def __init__(self, hooks: Sequence[Hook], ctx: HookContext) -> None:
        self.cancel = threading.Event()
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
                run_one(hook, ctx, cancel=self.cancel)
            except Exception as err:  # a hook can never take initd down (invariant 7)
                ctx.log.error("background session hook could not run", hook=hook.id,
                              error=repr(err))

    def stop(self) -> None:
        """Stop the hook that is running (TERM, grace, KILL to its group); skip the rest."""
        self.cancel.set()
        if self.thread.ident is not None:  # (never started: they ran inline)
            self.thread.join()


def _blocking(hook: Hook, ctx: HookContext, cancel: threading.Event | None,
              recorder: Recorder) -> runner.Result:
    """One blocking session hook. A workspace's root hook, in root's supervisor over an
    agent that is not root, may leave nothing running as root: root runs the workspace's
    code only before the agent runs (invariant 11), and a root daemon a workspace started
    would go on running, as root, on inputs the agent controls. What it left (its
    children re-parent to initd's reaper, outside the supervisor) is stopped now, named
    in one line. A daemon that drops to another user is not root's and stays; the
    image's hooks (--hooks-dir) are the image author's and may leave root daemons."""
    if not (hook.run_as == "root" and ctx.snapshots is not None
            and hook.directory == paths.workspace_hooks(ctx.workspace)):
        return run_one(hook, ctx, cancel=cancel, recorder=recorder.submit)
    reaper, me = os.getppid(), os.getpid()
    try:
        before = rootleftovers.root_leftovers(reaper, me)  # the image's hooks' daemons are spared
    except OSError as err:  # (no descriptor for LIMIT_WAIT): not run, rather than unwatched
        return refuse(hook, ctx, f"not run: what it leaves running as root cannot be "
                                 f"found ({err.strerror}), and it may leave nothing")
    result = run_one(hook, ctx, cancel=cancel, recorder=recorder.submit)
    try:
        left = rootleftovers.stop_root_leftovers(reaper, me, before, ctx.grace)
    except OSError as err:
        ctx.log.error("cannot look for what a workspace's root session hook left running "
                      "as root", hook=hook.id, error=str(err))
        return result
    if left:
        ctx.log.warning("a workspace's root session hook left processes running as root: "
                        "stopped (root runs the workspace's code only before the agent "
                        "starts; start a root daemon from the image's hooks, or have it "
                        "drop to another user)", hook=hook.id, file=hook.path,
                        processes=shown(left, 400))
    return result


def run_session_hooks(hooks: Sequence[Hook], ctx: HookContext,
                      cancel: threading.Event | None = None) -> BackgroundHooks | None:
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
                failed += not _blocking(hook, ctx, cancel, recorder).ok
            except Exception as err:  # e.g. the status directory cannot be written
                failed += 1
                ctx.log.error("session hook could not run", hook=hook.id, error=repr(err))
    finally:
        recorder.close()  # every result written before the agent starts
    ctx.log.info("session hooks done", failed=failed)
    background = [hook for hook in session if not hook.blocking]
    if not background or (cancel is not None and cancel.is_set()):
        return None
    return BackgroundHooks(background, ctx)
