"""The variable table an event's hooks read (agent-pipelines' ``${NAME}``), and the
environment made from it: what initd knows under its own names, the payload's keys in
UPPER_SNAKE, never a name that changes what a process loads or who it thinks it is."""

from __future__ import annotations

import re
from typing import Any

from initd.clock import now_iso
from initd.events import templates
from initd.events.setup import Setup
from initd.hooks import kinds
from initd.hooks.kinds import Event

# initd's own names in the table: what a hook reads there is initd's, never the payload's.
OWN = ("EVENT", "SESSION", "WORKSPACE", "TIMESTAMP", "LAST_HOOK_STATUS", "HOOK_RESPONSE",
       "SPAWN_OUTPUT")
# Names a payload key never sets in a hook's environment, even when initd's has none: they
# change what a process loads or runs (PATH, LD_PRELOAD, BASH_ENV, GIT_DIR, PYTHONPATH…)
# or who it thinks it is. The value still reaches a placeholder (``${LD_PRELOAD}``),
# through a reference of its own (templates.shell).
UNSAFE = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "IFS", "ENV", "BASH_ENV",
                    "SHELLOPTS", "BASHOPTS", "CDPATH", "GLOBIGNORE", "PS4", "PROMPT_COMMAND",
                    "TMPDIR", "NODE_OPTIONS", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT",
                    "RUBYLIB", "GCONV_PATH", "HOSTALIASES", "LOCPATH", "NLSPATH", "TZ"})
UNSAFE_PREFIXES = ("LD_", "GIT_", "PYTHON", "DYLD_", "BASH_FUNC", "INITD_", "DISCOBOT_",
                   "SSH_", "LC_", "LANG")


def table(event: Event, payload: dict[str, Any], setup: Setup) -> dict[str, Any]:
    """agent-pipelines' variable table: what initd knows, and the payload's keys in
    UPPER_SNAKE (``issueNumber`` is ISSUE_NUMBER), which never replace initd's own."""
    table: dict[str, Any] = {"EVENT": event.name, "SESSION": setup.session_id,
                             "WORKSPACE": setup.workspace, "TIMESTAMP": now_iso(),
                             "LAST_HOOK_STATUS": "", "HOOK_RESPONSE": "", "SPAWN_OUTPUT": ""}
    for key, value in payload.items():
        name = re.sub(r"\W", "_", kinds.snake(str(key))).upper()
        if name and not name[0].isdigit() and name not in OWN:
            table[name] = value
    return table


def exportable(name: str) -> bool:
    """May a payload's key become a variable of a hook's environment?"""
    return name not in UNSAFE and not name.startswith(UNSAFE_PREFIXES)


def environment(base: dict[str, str], table: dict[str, Any]) -> dict[str, str]:
    """The hook's environment: the payload's names under initd's environment (which wins:
    an event cannot replace PATH or HOME), initd's own names over both. A value holding
    a NUL byte cannot be an environment variable: it is left out (the hook still has the
    whole payload on stdin)."""
    texts = {k: templates.text(v) for k, v in table.items()}
    given = {k: v for k, v in texts.items() if k not in OWN and exportable(k)}
    own = {k: v for k, v in texts.items() if k in OWN}
    return {k: v for k, v in {**given, **base, **own}.items() if "\0" not in v}
