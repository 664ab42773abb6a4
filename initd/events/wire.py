"""How an agent calls initd from its own hook config (``initd emit --from AGENT``): the
JSON its hooks read on stdin comes in, initd's engine decides, and the answer goes back
as that agent reads a hook's answer (its exit codes, its JSON fields). A format whose
agent calls hooks has a Wire (its Dialect's ``wire``); initd's own formats, fired by the
discobot agent API with ``initd emit EVENT``, have none.

initd's shape of an event is Claude Code's, which the other agents' hooks converged on: a
tool is ``tool_name`` (``Bash``, ``Write``, ``Edit``, ``Read``, ``mcp__server__tool``…)
and ``tool_input`` (``command``, ``file_path``, ``content``…). A Wire reads its agent's
payload into that shape (``inbound``), keeping every field it does not translate, and
keeps what the agent sent as it sent it (``Origin``): a hook of the same agent's format
reads that, a hook of another format reads the event in its own agent's shape (its
Dialect's ``stdin``). One guard, written in any format, so holds for every agent.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol, runtime_checkable

from initd.errors import InitdError

# initd's (Claude Code's) tools that other agents name otherwise; their inputs' fields
SHELL, WRITE, EDIT, READ = "Bash", "Write", "Edit", "Read"
# initd's own line in an agent's hook config: [a path to] initd, or python3 -m initd, then
# emit --from AGENT and at most the event's name and a --socket (a path of plain words)
SHIM = re.compile(r"(?:[\w./-]*/)?(?:initd|python3?(?:\.\d+)? -m initd) emit "
                  r"--from[ =][a-z]+(?: [A-Za-z_]+)?(?: --socket[ =][\w./-]+)?")
MCP_PREFIX = "mcp__"
PLAIN_PATH = re.compile(r"[\w./-]+")  # a path SHIM reads (and no shell word)


class Origin(NamedTuple):
    """What the agent sent, as it sent it."""

    agent: str  # the registry's name of its format: "gemini"
    name: str  # the event as the agent names it: "BeforeTool"
    payload: dict[str, Any]
    # what the agent's hook environment held of its wire's ``passes`` (Claude Code's
    # CLAUDE_ENV_FILE): the agent's own hooks initd runs get it in theirs
    env: tuple[tuple[str, str], ...] = ()
    # further views of the same call, in initd's shape, for other formats' hooks: one per
    # further file a Codex apply_patch writes (Inbound.payload is its first)
    each: tuple[dict[str, Any], ...] = ()


class Inbound(NamedTuple):
    event: str  # initd's name for the event (hooks/kinds.py): "pre_tool"
    payload: dict[str, Any]  # in initd's shape, every field not translated kept
    origin: Origin


class Reply(NamedTuple):
    """A hook's answer, as the agent reads it."""

    code: int
    stdout: str = ""
    stderr: str = ""


class Shim(NamedTuple):
    """The agent's own hook config that sends every event of the agent to initd."""

    path: str  # the user's own file, below $HOME: ".gemini/settings.json"
    config: dict[str, Any]  # what it holds, merged into what the file has


class WireError(InitdError):
    """A payload the agent's wire cannot read (no event name, an event it has not)."""


class Wire(Protocol):
    agent: str  # the registry's name: "claude"
    name_field: str  # where the payload names its event: "hook_event_name"
    events: Mapping[str, str]  # the agent's name for each event -> initd's (docs/agents.md)

    def inbound(self, payload: dict[str, Any], name: str | None) -> Inbound:
        """The payload (and the event named ``name`` or by its own field) in initd's
        shape; WireError when the agent has no such event."""

    def reply(self, inbound: Inbound, outcome: Mapping[str, Any]) -> Reply:
        """The outcome (the control API's JSON of outcome.Outcome) as the agent's hook
        answers."""

    def shim(self, command: str) -> Shim:
        """Every event of the agent, each running ``command``."""

    # optional: ``passes(event) -> tuple[str, ...]``, the variables of the agent's hook
    # environment ``initd emit --from`` sends on with ``event`` (passed_on)


ENV_LIMIT = 4096  # bytes of one variable passed on (a path: PATH_MAX)


def passed_on(wire: Wire, event: str, given: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables of ``given`` (the environment emit runs in, or what it sent) that
    ``wire`` passes on for ``event``: only the names its ``passes`` lists, none holding a
    NUL or over ENV_LIMIT (such a value is left out: its hooks get none)."""
    names = getattr(wire, "passes", lambda event: ())(event)
    return tuple((name, given[name]) for name in names if isinstance(given.get(name), str)
                 and "\0" not in given[name] and len(given[name].encode()) <= ENV_LIMIT)


@runtime_checkable
class Unasked(Protocol):
    """A Wire whose agent has its own answer for an event that guards nothing and that
    initd could not put to its hooks (any other's: exit 1 with the reason, a hook's
    error): Codex shows a ``systemMessage`` as a warning."""

    def unasked(self, inbound: Inbound, why: str) -> Reply:
        """The answer, ``why`` saying what went wrong."""


def is_shim(command: str) -> bool:
    """A hook that is ``initd emit --from AGENT`` and nothing else (what ``initd shim``
    writes): the bridge from the agent to initd, which initd must not run as one of its
    own hooks (it would send the event back to itself). Anything more on the line (a
    ``;``, a second command, a redirection) is a hook like any other, and runs."""
    return SHIM.fullmatch(command.strip()) is not None


def absolute(command: str) -> str:
    """``initd ...`` with initd's absolute path, when one is found: an agent that runs its
    hooks with a PATH of its own (Codex's ``$SHELL -lc``, a login shell setting PATH anew;
    Cursor's user hooks, run from ``~/.cursor`` with Cursor's PATH) may not have initd's
    directory. initd's own program, never ``python -m initd``, which would import an
    ``initd`` folder of the hook's directory first; a path SHIM reads, no shell word."""
    if not command.startswith("initd "):
        return command
    run = sys.argv[0] if os.path.basename(sys.argv[0]) == "initd" else ""
    for path in (run, os.path.join(os.path.dirname(sys.executable), "initd"),
                 shutil.which("initd") or ""):
        full = os.path.abspath(path) if path else ""
        if full and os.access(full, os.X_OK) and PLAIN_PATH.fullmatch(full):
            return full + command[len("initd"):]
    return command


def named(payload: Mapping[str, Any], name: str | None, field: str, agent: str) -> str:
    """The event's name: ``name`` when given, else the payload's own field."""
    said = name if name is not None else payload.get(field)
    if not isinstance(said, str) or not said:
        raise WireError(f"{agent}: the payload names no event (no {field!r}), and none "
                        "was given on the command line")
    return said


def event_of(payload: Mapping[str, Any], name: str | None, field: str,
             events: Mapping[str, str], title: str) -> tuple[str, str]:
    """(the agent's name for the event, initd's): ``name`` when given, else the payload's
    own ``field``; WireError for an event the agent's table has not."""
    said = named(payload, name, field, title)
    if said not in events:
        raise WireError(f"{title} has no hook event {said!r} that initd knows (it serves: "
                        f"{', '.join(events)})")
    return said, events[said]


def blocked_outcome(why: str) -> dict[str, Any]:
    """The outcome of a guard-capable event initd could not put to its hooks (no
    service, its error, a payload it could not take): blocked (invariant 12)."""
    return {"blocked": True, "reason": why, "feedback": None, "context": None,
            "aborted": False, "results": [], "permissionDecision": "deny"}


def tool(payload: Mapping[str, Any], names: Mapping[str, str], inputs: Mapping[
        str, Mapping[str, str]] | None = None) -> dict[str, Any]:
    """``tool_name`` (and its ``tool_input``'s fields) read from an agent's words into
    initd's: ``names`` maps the agent's tool names to initd's, ``inputs`` the fields of a
    tool's input (by initd's name) to initd's field names. A tool no table has keeps its
    name (its hooks' matchers see it as the agent named it)."""
    out = dict(payload)
    said = payload.get("tool_name")
    if isinstance(said, str) and said in names:
        out["tool_name"] = names[said]
        given = payload.get("tool_input")
        fields = (inputs or {}).get(names[said], {})
        if isinstance(given, Mapping) and fields:
            out["tool_input"] = {fields.get(k, k): v for k, v in given.items()}
    return out


def untool(payload: Mapping[str, Any], names: Mapping[str, str], inputs: Mapping[
        str, Mapping[str, str]] | None = None) -> dict[str, Any]:
    """``tool`` the other way: initd's words into an agent's (the same tables)."""
    back = {ours: theirs for theirs, ours in names.items()}
    out = dict(payload)
    said = payload.get("tool_name")
    if isinstance(said, str) and said in back:
        out["tool_name"] = back[said]
        given = payload.get("tool_input")
        fields = {ours: theirs for theirs, ours in (inputs or {}).get(said, {}).items()}
        if isinstance(given, Mapping) and fields:
            out["tool_input"] = {fields.get(k, k): v for k, v in given.items()}
    return out
