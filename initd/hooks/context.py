"""What running a hook needs besides the hook: the context, made from initd's settings
(any object with the fields of ``Options``: domain code never imports the settings),
and the state directory it writes to."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from initd.config.log import Logger
from initd.hooks.model import Hook
from initd.hooks.status.memory import MemoryStore
from initd.hooks.status.store import StatusStore
from initd.process import spawn, users
from initd.process.limits import NONE as NO_LIMITS
from initd.process.limits import Limits
from initd.process.spec import HOOK_ENV
from initd.state import statefile
from initd.state.agentfs import Place

if TYPE_CHECKING:
    from initd.hooks.trust import Trust


class Options(Protocol):
    """The settings hooks read (initd.config.settings.Settings has them all)."""

    @property
    def workspace(self) -> str: ...
    @property
    def state_dir(self) -> str | None: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def secret(self) -> tuple[str, ...]: ...
    @property
    def grace(self) -> float: ...
    @property
    def trust(self) -> bool: ...
    @property
    def trust_file(self) -> str: ...
    @property
    def hooks_dir(self) -> str: ...
    @property
    def hook_limits(self) -> Limits: ...


class Snapshot(NamedTuple):
    """Root's copy of a ``run_as: root`` hook, taken at boot (supervisor/roothooks.py)."""

    hook: Hook  # as discovered at boot, its path pointing at the copy
    original: str  # where the hook lives in the workspace (or the image)
    content: bytes  # what it said at boot: what runs, and what --trust judges


class Snapshots(Protocol):
    def copy_of(self, hook: Hook) -> Snapshot | str:
        """Root's copy of ``hook``, or why root will not run it."""
        ...


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
    trust: Trust | None = None  # with enforcement on: which workspace hooks may run
    # In root's supervisor, over an agent that is not root: the copies every run_as: root
    # session hook runs from (taken at boot, before any hook ran).
    snapshots: Snapshots | None = None
    limits: Limits = NO_LIMITS  # the image's for every hook (initd.yaml: hook_limits)
    # devcontainer.json's containerEnv (devcontainer/procenv.py), for the hooks that run
    # as the agent: the file is the agent's to write, so never for a run_as: root hook (invariant 8)
    container_env: tuple[tuple[str, str], ...] = ()

    @property
    def state_problem(self) -> str | None:
        """Why state is kept in memory only (prepare_state), or why results are kept in
        memory until the disk allows (a full disk): the service is degraded meanwhile."""
        if isinstance(self.store, MemoryStore):
            return self.store.reason
        return self.store.kept_problem


def session_id(given: str | None, log: Logger) -> str:
    """--session-id, INITD_SESSION_ID or SESSION_ID; else a new one, logged."""
    if given:
        return given
    generated = os.urandom(6).hex()
    log.info("no session id given (--session-id, SESSION_ID): generated one",
             session_id=generated)
    return generated


def make(options: Options, agent: users.Account | None, log: Logger,
         session: str | None = None, *,
         recover: Callable[[dict[str, Any]], bool] | None = None,
         prepare: bool = False) -> HookContext:
    """The context for running hooks. With ``recover`` or ``prepare``, the state
    directories are made (``state_problem`` says why they cannot be); with ``recover``,
    hooks left ``running`` by a process that died (``recover(entry)`` says whether it
    did) are recovered first: boot before the agent recovers every one (nothing of
    initd's runs yet), a (re)started hook service those whose runner is gone; a commit,
    a CLI run or root once the agent runs none (``prepare`` alone: root then takes no
    lock of the agent's tree, and the service recovers at its start)."""
    from initd.hooks import recovery

    agent = agent or users.current()
    session = session or session_id(options.session_id, log)
    owner = (agent.uid, agent.gid) if os.geteuid() == 0 else None
    state = statefile.root(agent.home, options.state_dir, owner)
    store = StatusStore.for_session(state, session)
    trust = None
    if options.trust:
        from initd.hooks.trust import Trust

        trust = Trust(options.trust_file, enforce=True, image_dir=options.hooks_dir)
    ctx = HookContext(workspace=options.workspace, session_id=session, agent=agent,
                      store=store, state=state, secrets=options.secret,
                      grace=options.grace, log=log, trust=trust, limits=options.hook_limits)
    if recover is not None or prepare:  # a process that lives with the session
        problem = prepare_state(ctx)  # (its callers say it)
        if problem is not None:  # kept in memory, for this process's life
            return ctx._replace(store=MemoryStore(store.place, problem))
    if recover is not None:
        recovery.recover_interrupted(store, recover, options.grace, log)
    return ctx


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


def account_for(hook: Hook, ctx: HookContext) -> users.Account:
    """Only the exact ``run_as: root`` (validated) keeps initd's own user and its HOME."""
    return ctx.agent if hook.run_as == "user" else users.current()


def environment(hook: Hook, ctx: HookContext,
                more: dict[str, str] | None = None) -> dict[str, str]:
    """initd's environment, the user's login variables, containerEnv (a hook that runs
    as the agent), initd's variables for hooks; never a secret."""
    container = dict(ctx.container_env) if hook.run_as == "user" else {}
    extra = {**container, "DISCOBOT_SESSION_ID": ctx.session_id,
             "DISCOBOT_WORKSPACE": ctx.workspace, "DISCOBOT_HOOK_TYPE": hook.type,
             **(more or {}), **HOOK_ENV}
    return spawn.environment(os.environ, account_for(hook, ctx), extra, remove=ctx.secrets)
