"""devcontainer.json's record, as far as initd runs it: its lifecycle commands
(https://containers.dev/implementors/json_reference/#lifecycle-scripts), ``waitFor``,
the users named, the environment given and how the user's own is probed, and the
problems found, each naming the file and the key. config.py makes it."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
from typing import Any, NamedTuple

from initd.config.problems import ERROR, Problem
from initd.devcontainer.env import Substitution
from initd.hooks.model import Hook
from initd.process import limits

# postAttachCommand last: "run after postStartCommand" (the schema), once the agent is up
# (the agent is what attaches); never waited for (waitFor's enum ends at postStartCommand)
ATTACH = "postAttachCommand"
STAGES = ("onCreateCommand", "updateContentCommand", "postCreateCommand", "postStartCommand",
          ATTACH)
ONCE = frozenset(STAGES[:3])  # once per container; the last two at every start
WAIT_FOR = ("initializeCommand", *STAGES[:4])  # the schema's enum; the default:
DEFAULT_WAIT_FOR = "updateContentCommand"
# userEnvProbe's values (the schema's enum), each with its shell's flags; the default:
PROBES = {"none": "", "interactiveShell": "-ic", "loginShell": "-lc",
          "loginInteractiveShell": "-lic"}
DEFAULT_PROBE = "loginInteractiveShell"
DEFAULT_TIMEOUT = 1800.0  # seconds per command (customizations.initd.timeout)
KIND = "devcontainer"  # the type its commands have in status.json


class Command(NamedTuple):
    stage: str
    name: str | None  # its key in the object form; None for a plain string or array
    form: str  # "string" (run by /bin/sh -c) or "array" (executed as is, no shell)
    args: tuple[str, ...]  # the string alone, or the array, as written

    @property
    def label(self) -> str:
        return self.stage if self.name is None else f"{self.stage}.{self.name}"

    @property
    def text(self) -> str:
        """For people: the string, or the array as a shell would read it."""
        return self.args[0] if self.form == "string" else shlex.join(self.args)

    def argv(self, resolve: Substitution) -> tuple[str, ...]:
        args = tuple(resolve.text(arg) for arg in self.args)
        return ("/bin/sh", "-c", args[0]) if self.form == "string" else args

    def hook(self, config: Config) -> Hook:
        """Its record in status.json and its log's name: ``devcontainer-oncreatecommand``,
        ``devcontainer-postcreatecommand-db`` (one plain file name, whatever the key)."""
        tail = re.sub(r"[^a-z0-9_-]", "", (self.name or "").lower().replace(".", "-"))
        ident = f"{KIND}-{self.stage.lower()}" + (f"-{tail}" if tail else "")
        if self.name is not None:  # two keys that clean to the same name stay apart
            ident += "-" + hashlib.sha256(self.name.encode()).hexdigest()[:6]
        return Hook(id=ident[:200], name=self.label, type=KIND, path=config.path,
                    directory=os.path.dirname(config.path), timeout=config.timeout,
                    limits=config.limits)


class Stage(NamedTuple):
    key: str
    commands: tuple[Command, ...]
    parallel: bool  # the object form: its commands run at once
    raw: Any  # as written (what trust hashes)


class Config(NamedTuple):
    path: str
    workspace: str
    stages: tuple[Stage, ...] = ()  # those the file has, in the specification's order
    wait_for: str = DEFAULT_WAIT_FOR
    remote_user: str | None = None
    container_user: str | None = None
    container_env: tuple[tuple[str, str], ...] = ()
    remote_env: tuple[tuple[str, str | None], ...] = ()  # None: unset
    timeout: float = DEFAULT_TIMEOUT
    limits: limits.Limits = limits.NONE
    problems: tuple[Problem, ...] = ()
    ignored: tuple[str, ...] = ()  # lifecycle keys the file has that initd does not run
    user_env_probe: str = DEFAULT_PROBE
    runs: bool = True  # False: several sub-folder files and none chosen (file.py)

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == ERROR)

    def waited(self, stage: str) -> bool:
        """Does the agent start only after this stage?"""
        return STAGES.index(stage) <= STAGES.index(self.wait_for) \
            if self.wait_for in STAGES else False
