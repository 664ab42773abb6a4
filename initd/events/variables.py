"""The variable table an event's hooks read (agent-pipelines' ``${NAME}``), and the
environment made from it: what initd knows under its own names, the payload's keys in
UPPER_SNAKE, never a name that changes what a process loads or who it thinks it is."""

from __future__ import annotations

import re
from typing import Any

from initd.events import execsize, templates
from initd.events.context import EventContext
from initd.hooks import kinds
from initd.hooks.kinds import Event
from initd.state.clock import now_iso

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
# A hook's environment says which of the payload's names were left out of it (too big
# for exec, or holding a NUL), space-separated: the hook reads them on stdin.
LEFT_OUT = "INITD_LEFT_OUT"
PAYLOAD_BUDGET = 512 * 1024  # bytes of the payload's variables in one environment
# (of ARG_MAX's 2 MiB by default: initd's own environment and the command need the rest)


def table(event: Event, payload: dict[str, Any], ctx: EventContext) -> dict[str, Any]:
    """agent-pipelines' variable table: what initd knows, and the payload's keys in
    UPPER_SNAKE (``issueNumber`` is ISSUE_NUMBER), which never replace initd's own."""
    table: dict[str, Any] = {"EVENT": event.name, "SESSION": ctx.session_id,
                             "WORKSPACE": ctx.workspace, "TIMESTAMP": now_iso(),
                             "LAST_HOOK_STATUS": "", "HOOK_RESPONSE": "", "SPAWN_OUTPUT": ""}
    for key, value in payload.items():
        name = re.sub(r"\W", "_", kinds.snake(str(key))).upper()
        if name and not name[0].isdigit() and name not in OWN:
            table[name] = value
    return table


def named(event: Event, payload: dict[str, Any], ctx: EventContext) -> dict[str, Any]:
    """The payload's names alone of ``table`` (none of initd's own)."""
    return {k: v for k, v in table(event, payload, ctx).items() if k not in OWN}


def exportable(name: str) -> bool:
    """May a payload's key become a variable of a hook's environment?"""
    return name not in UNSAFE and not name.startswith(UNSAFE_PREFIXES)


def environment(base: dict[str, str], table: dict[str, Any]) -> dict[str, str]:
    """The hook's environment: the payload's names under initd's environment (which wins:
    an event cannot replace PATH or HOME), initd's own names over both. A payload's value
    that cannot be a variable is left out (the hook has the whole payload on stdin), and
    LEFT_OUT names those: one holding a NUL byte, one over what exec takes (a Write's
    whole file: execsize.STRING_LIMIT), and the biggest while all of them together are
    over PAYLOAD_BUDGET. A variable exec refuses (E2BIG) would stop the hook. A value
    surely over the limit is left out without its text ever being made (a Write's
    file, or the tool input that holds it: no copy of it per hook)."""
    given = {k: v for k, v in table.items() if k not in OWN and exportable(k)
             and k not in base}
    own = {k: templates.text(v) for k, v in table.items() if k in OWN}
    kept, left = _fitting(given)
    env = {k: v for k, v in {**kept, **base, **own}.items() if "\0" not in v}
    if left:
        env[LEFT_OUT] = " ".join(sorted(left))
    return env


def _fitting(given: dict[str, Any]) -> tuple[dict[str, str], set[str]]:
    """(the payload's variables that fit an environment, the names of those left out)."""
    kept: dict[str, str] = {}
    left: set[str] = set()
    for name, value in given.items():
        text = None if _over(value, execsize.STRING_LIMIT) else templates.text(value)
        if text is None or "\0" in text or \
                execsize.size(f"{name}={text}") - execsize.POINTER > execsize.STRING_LIMIT:
            left.add(name)
        else:
            kept[name] = text
    total = sum(execsize.size(f"{k}={v}") for k, v in kept.items())
    for name in sorted(kept, key=lambda k: -len(kept[k])):
        if total <= PAYLOAD_BUDGET:
            break
        total -= execsize.size(f"{name}={kept.pop(name)}")
        left.add(name)
    return kept, left


def _over(value: Any, limit: int) -> bool:
    """Is ``value``'s text (templates.text) surely over ``limit`` bytes? Found from its
    strings' lengths (a character is a byte at least), without making the text."""
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list | tuple):
            stack += item
    return total > limit
