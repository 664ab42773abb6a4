"""devcontainer.json's environment: its ``${…}`` variables, and what ``containerEnv`` and
``remoteEnv`` give to which processes
(https://containers.dev/implementors/json_reference/#general-properties).

- containerEnv "will set the variable on the Docker container itself, so all processes
  spawned in the container will have access to it": every process that runs as the
  agent (its session hooks, the hook service and every hook it runs, the agent, the
  commands). Never root's: the file is the agent's to write, and a variable such as
  LD_PRELOAD would hand it root (invariants 8, 11).
- remoteEnv is for the tool's processes: the agent and the lifecycle commands.
- Neither redirects initd's own variables (OWN_PREFIX, OWN_NAMES): they tell the agent
  and the hooks where initd and their state are.

Plain values in, plain values out: the file's record is config.py's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

# ${name} or ${name:args}: the reference CLI's syntax (devcontainers/cli,
# src/spec-common/variableSubstitution.ts)
VARIABLE = re.compile(r"\$\{([^}]*)\}")
SUPPORTED = frozenset({"localEnv", "env", "containerEnv", "localWorkspaceFolder",
                       "localWorkspaceFolderBasename", "containerWorkspaceFolder",
                       "containerWorkspaceFolderBasename"})
# a name in the dev container's style that is none of those: said, and left as written
# (a shell's own ${HOME} or ${X:-y} in a command is no variable of the file's)
STYLE = re.compile(r"(local|container|devcontainer)[A-Za-z]*")
# What initd gives the agent and the commands, which the file (the agent's to write) may
# not redirect: INITD_SOCKET, INITD_STATE_DIR... and the hooks' own variables.
OWN_PREFIX = "INITD_"
OWN_NAMES = frozenset(("DISCOBOT_SESSION_ID", "DISCOBOT_WORKSPACE", "DISCOBOT_HOOK_TYPE"))


def own(name: str) -> bool:
    """Is this one of initd's own variables (never the file's to set)?"""
    return name.startswith(OWN_PREFIX) or name in OWN_NAMES


def unknown_variables(text: str) -> list[str]:
    """The ``${…}`` in ``text`` that look like the dev container's and are not known."""
    found = []
    for match in VARIABLE.finditer(text):
        name, _, rest = match[1].partition(":")
        if name in SUPPORTED:
            if name.endswith("Env") and not rest:  # ${localEnv}: which variable?
                found.append(match[1])
        elif STYLE.fullmatch(name):
            found.append(match[1])
    return found


class Substitution:
    """``${…}`` in the file's texts, as the reference CLI resolves them, inside the
    container: ``localEnv`` (and ``env``) is initd's own environment (there is no other
    host to ask), ``containerEnv`` that plus the file's containerEnv, both without the
    secrets; ``${localEnv:NAME:default}``; both workspace folders are the workspace.
    Anything else is left as written (said once, when the file is checked)."""

    def __init__(self, base: Mapping[str, str], workspace: str,
                 container: Mapping[str, str] | None = None) -> None:
        self.base = base
        self.container = base if container is None else container
        self.workspace = workspace

    def text(self, text: str) -> str:
        return VARIABLE.sub(self._one, text)

    def _one(self, match: re.Match[str]) -> str:
        name, *args = match[1].split(":")
        if name in ("localEnv", "env", "containerEnv") and args and args[0]:
            env = self.base if name != "containerEnv" else self.container
            value = env.get(args[0])
            return value if value is not None else (args[1] if len(args) > 1 else "")
        if name in ("localWorkspaceFolder", "containerWorkspaceFolder"):
            return self.workspace
        if name in ("localWorkspaceFolderBasename", "containerWorkspaceFolderBasename"):
            return os.path.basename(self.workspace.rstrip("/"))
        return match[0]


def resolve(container_env: Iterable[tuple[str, str]],
            remote_env: Iterable[tuple[str, str | None]], workspace: str,
            base: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str | None]]:
    """(containerEnv, remoteEnv) with their variables resolved: remoteEnv's
    ``${containerEnv:…}`` sees containerEnv; None unsets. ``base``: initd's environment
    without the secrets."""
    first = Substitution(base, workspace)
    container = {name: first.text(value) for name, value in container_env}
    second = Substitution(base, workspace, {**base, **container})
    remote = {name: None if value is None else second.text(value)
              for name, value in remote_env}
    return container, remote


def apply(env: Mapping[str, str], changes: Mapping[str, str | None]) -> dict[str, str]:
    out = dict(env)
    for name, value in changes.items():
        if value is None:
            out.pop(name, None)
        else:
            out[name] = value
    return out
