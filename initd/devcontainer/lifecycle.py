"""Boot's dev container phase: devcontainer.json's lifecycle commands, run by initd as a
dev container tool runs them (https://containers.dev/implementors/json_reference/
#lifecycle-scripts), with initd's rules for who runs them and what is trusted.

- ``onCreateCommand``, ``updateContentCommand`` and ``postCreateCommand`` run once per
  container (markers.py); ``postStartCommand`` runs at every start.
- The file is read before the session hooks run: its containerEnv is theirs too, and the
  hook service's (procenv.py). The user's environment is probed once (userEnvProbe:
  userenv.py), before the first stage.
- The agent starts once ``waitFor``'s stage (default ``updateContentCommand``) and every
  stage before it are done; the later stages run in order in a background thread that
  initd owns and stops. ``postAttachCommand`` comes last, once the agent is up (running;
  ready, with a readiness check): the agent is the tool that attaches, once per boot.
- A failed stage is logged and recorded in status.json like a failed session hook; the
  stages after it do not run (the specification: "if one of the lifecycle scripts fails,
  any subsequent scripts will not be executed"), and the agent starts all the same.
- Each command runs in a session of its own. What it leaves running (``nohup x &``) keeps
  running after it exits, its output still read into the command's capped log, then
  drained (daemons.py), and is stopped with initd: TERM to every process left in those
  sessions, the grace, KILL.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

from initd.devcontainer import config as devcontainer
from initd.devcontainer.config import Command, Config, Stage
from initd.devcontainer.daemons import Keeper
from initd.devcontainer.markers import Markers
from initd.devcontainer.markers import container_identity as container_identity
from initd.devcontainer.procenv import ProcessEnv
from initd.hooks.context import HookContext
from initd.hooks.launch import Launch, execute, refuse
from initd.process import runner, users


class Lifecycle:
    """One boot's lifecycle commands: the waited stages now, the rest in the background;
    ``stop`` ends whatever still runs, and what the commands left running."""

    def __init__(self, config: Config, ctx: HookContext, account: users.Account | None
                 ) -> None:
        self.config = config
        self.ctx = ctx
        self.account = account  # None: nobody may run them (said already)
        self.envs = ProcessEnv(config, ctx, account)
        self.keeper = Keeper(ctx, account.uid if account is not None else os.getuid())
        self.cancel = threading.Event()
        self.thread: threading.Thread | None = None
        self.failed: str | None = None  # the stage that failed: the later ones do not run
        self.attached = threading.Event()  # the agent is up: postAttachCommand may run
        self.markers = Markers(ctx, config)

    def agent_env(self, env: dict[str, str]) -> dict[str, str]:
        """The agent's environment with the file's: the agent is what a dev container
        tool would start in the container."""
        return self.envs.agent(env)

    def container_env(self) -> tuple[tuple[str, str], ...]:
        """containerEnv, for the agent's other processes: its session hooks, the hook
        service and its hooks (never root's)."""
        return self.envs.container_env()

    def run_waited(self, stop: threading.Event | None) -> None:
        """The user's environment probed, then every stage up to waitFor's, in order, now;
        ``stop`` (initd is stopping) cancels the running command and skips the rest."""
        self.envs.probe(stop)
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
            self.ctx.log.warning("devcontainer: the later stages run before the agent "
                                 "(postAttachCommand, which is for after it, does not): "
                                 "cannot start a thread", error=str(err))
            self._background([s for s in later if s.key != devcontainer.ATTACH])

    def attach(self) -> None:
        """The agent is up (the supervisor says so, once)."""
        self.attached.set()

    def _background(self, stages: Sequence[Stage]) -> None:
        for stage in stages:
            if stage.key == devcontainer.ATTACH:
                self.attached.wait()  # (stop sets it too: then cancel is set)
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
        self.attached.set()  # (postAttachCommand waits no more: it is skipped)
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
        return trust.refused(next(e for e in devcontainer.trust_entries(self.config)
                                  if e.key.endswith("#" + stage.key)))

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
        return execute(command.hook(self.config), self.ctx, Launch(
            command.argv(self.envs.variables), self.envs.commands(), self.config.workspace,
            self.account, self.config.timeout, self.config.limits.over(self.ctx.limits),
            command.label, f"devcontainer {command.label}", self.keeper), cancel=cancel)


def prepare(config: Config, ctx: HookContext) -> Lifecycle | None:
    """The phase for this file, or None when it has errors (each said: nothing of it
    runs, and the agent starts without its environment) or is not to run (several
    sub-folder files: said too)."""
    log = ctx.log.bind(file=config.path)
    for problem in config.problems:  # (a key initd does not run is said by default too)
        report = log.error if problem.severity == devcontainer.ERROR else log.warning \
            if problem.severity == devcontainer.WARNING or problem.key in config.ignored \
            else log.info
        report(f"devcontainer: {problem}")
    if config.errors:
        log.error("devcontainer.json has errors: none of its commands run")
        return None
    if not config.runs:
        return None
    chosen = devcontainer.runner_for(config, ctx.agent)
    if chosen.warning is not None:
        log.warning(f"devcontainer: {chosen.warning}")
    ctx.log.info("devcontainer", file=config.path, wait_for=config.wait_for,
                 stages=[s.key for s in config.stages],
                 user=chosen.account.name if chosen.account else None)
    return Lifecycle(config, ctx, chosen.account)
