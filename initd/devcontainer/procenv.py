"""The environments one boot's processes get from devcontainer.json (env.py says which
variable goes where): the commands', the agent's, and containerEnv alone for every other
process that runs as the agent (its session hooks, the hook service and its hooks).

- The commands: initd's environment without the secrets, the user's login variables,
  containerEnv, the user's probed environment (userenv.py), remoteEnv. They run only
  when their stage is trusted, and a stage's approval covers the environment too.
- The agent and the hooks: the same, only when ``--trust`` approves the file's
  environment (its ``#environment`` entry); the agent gets the probed environment
  either way (it is the user's own, not the file's).
"""

from __future__ import annotations

import os
import threading

from initd.devcontainer import env as dcenv
from initd.devcontainer.model import KIND, PROBES, Config
from initd.devcontainer.users import trust_entries
from initd.hooks import userenv
from initd.hooks.context import HookContext
from initd.process import spawn, users
from initd.process.spec import HOOK_ENV


class ProcessEnv:
    """What the file's environment is for each process of this boot."""

    def __init__(self, config: Config, ctx: HookContext, account: users.Account | None
                 ) -> None:
        self.config = config
        self.ctx = ctx
        self.account = account
        base = spawn.environment(os.environ, None, remove=ctx.secrets)  # never a secret
        self.container, self.remote = dcenv.resolve(config.container_env, config.remote_env,
                                                    config.workspace, base)
        self.variables = dcenv.Substitution(base, config.workspace,
                                            {**base, **self.container})  # ${…} in commands
        self.trusted = self._trusted()
        self.probed: dict[str, str] = {}
        # the commands' environment before the probe and remoteEnv: what the probe gets
        self.before = self._clean(dcenv.apply(spawn.environment(
            os.environ, account, {"DISCOBOT_SESSION_ID": ctx.session_id,
                                  "DISCOBOT_WORKSPACE": ctx.workspace,
                                  "DISCOBOT_HOOK_TYPE": KIND}), self.container))

    def commands(self) -> dict[str, str]:
        return self._clean(dcenv.apply({**self.before, **self.probed}, self.remote))

    def agent(self, env: dict[str, str]) -> dict[str, str]:
        """The agent's environment (``env``) as a dev container tool would start it in
        the container: containerEnv, the probed environment, remoteEnv."""
        if not self.trusted:
            return {**env, **self.probed}
        return dcenv.apply({**dcenv.apply(env, self.container), **self.probed}, self.remote)

    def container_env(self) -> tuple[tuple[str, str], ...]:
        """containerEnv, for every other process that runs as the agent (never root's)."""
        return tuple(self.container.items()) if self.trusted else ()

    def probe(self, cancel: threading.Event | None) -> None:
        """userEnvProbe, once: what it finds goes to the commands and the agent."""
        got = userenv.probe(PROBES[self.config.user_env_probe], self.account, self.before,
                            self.config.workspace, self.ctx.grace,
                            lambda name: dcenv.own(name) or name in self.ctx.secrets, cancel)
        log = self.ctx.log.bind(file=self.config.path)
        if got.warning is not None:
            log.warning(f"devcontainer: {got.warning}: the commands and the agent start "
                        "without the user's profile's environment")
        elif got.note is not None:
            log.info(f"devcontainer: {got.note}")
        self.probed = got.changes

    def _clean(self, env: dict[str, str]) -> dict[str, str]:
        env.update(HOOK_ENV)
        for name in self.ctx.secrets:
            env.pop(name, None)
        return env

    def _trusted(self) -> bool:
        trust = self.ctx.trust
        entries = [e for e in trust_entries(self.config) if e.key.endswith("#environment")]
        if trust is None or not entries:
            return True
        refused = trust.refused(entries[0])
        if refused is None:
            return True
        self.ctx.log.warning("devcontainer containerEnv and remoteEnv not given to the "
                             "agent and its hooks", reason=refused)
        return False
