"""Claude Code's filters (``.claude/settings.json``): a matcher group's ``matcher`` and a
handler's ``if``, as https://code.claude.com/docs/en/hooks and /en/permissions give them.

``matcher``: ``"*"``, ``""`` or none match every occurrence; only letters, digits, ``_``
and ``|`` is an exact name or a ``|`` list of them (``Edit|Write``); anything else is a
regular expression *searched* in the value, as JavaScript's ``RegExp.test`` does
(``^Notebook``, ``mcp__.*``), read by Python's ``re``. It is tested on the event's own
field: the tool name, SessionStart's ``source``, SessionEnd's ``reason``, PreCompact's
``trigger``, Notification's ``notification_type``, SubagentStop's ``agent_type``; the other
events have none (their matcher is ignored, as Claude Code ignores it). A payload without
that field matches only a matcher that matches everything.

``if`` (tool events only; on any other event a hook with ``if`` never runs): permission
rule syntax. ``Bash(git commit *)`` (or the ``:*`` spelling ``Bash(git commit:*)``) is
``git commit`` alone or followed by a space; ``*`` anywhere matches any text;
``Bash(npm test)`` is that command exactly; ``Bash`` and ``Bash(*)`` any. A compound
command matches when the whole of it, or any one command in it (split at unquoted
``&& || ; | &`` and newlines, leading ``NAME=value`` assignments left out) does: a check
must not be skipped by writing ``cd x && rm -rf y``. ``Edit(*.ts)``, ``Read(//etc/**)``:
gitignore-style paths (``//`` absolute, ``~/`` the home, ``/`` the project, a name
without ``/`` at any depth); ``Edit`` covers Write, MultiEdit and NotebookEdit, ``Read``
covers Glob, Grep and NotebookRead. ``WebFetch(domain:*.example.com)``. ``mcp__server``
is every tool of that server.

Regular expressions run in the hook service for every event, on a payload the agent
writes, so one that could backtrack for ever is refused when it loads: at most
PATTERN_LIMIT characters and UNBOUNDED_LIMIT unbounded repeats, none of them applied to
a group that itself repeats or alternates (``(a+)+``, ``(a|b)*``), and a value longer
than SUBJECT_LIMIT characters (no tool name is) never matches one.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any, NamedTuple

PATTERN_LIMIT = 256
UNBOUNDED_LIMIT = 3
SUBJECT_LIMIT = 128
FIELDS = {"pre_tool": "tool_name", "post_tool": "tool_name", "post_tool_failure": "tool_name",
          "session_start": "source", "session_end": "reason", "pre_compact": "trigger",
          "notification": "notification_type", "subagent_stop": "agent_type"}
TOOL_FIELD = "tool_name"
_NAMES = re.compile(r"[A-Za-z0-9_|]*")
_RULE = re.compile(r"([A-Za-z0-9_.*-]+)(?:\((.*)\))?", re.DOTALL)
_PATH_TOOLS: dict[str, tuple[str, ...]] = {
    "Edit": ("Edit", "Write", "MultiEdit", "NotebookEdit"),
    "Read": ("Read", "Glob", "Grep", "NotebookRead")}
_PATH_TOOLS.update({tool: (tool,) for tool in ("Write", "MultiEdit", "NotebookEdit", "Glob",
                                               "Grep", "NotebookRead")})
_ASSIGNMENT = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+")
_OPERATORS = ("&&", "||", ";", "|", "&", "\n")


class MatcherError(ValueError):
    """A matcher or an ``if`` rule that cannot be used; the message says why."""


class Matcher(NamedTuple):
    """A Claude Code hook's filters, as plain data (the listing and trust show it)."""

    text: str  # the group's matcher as written ("": every occurrence)
    field: str | None  # the payload field it is tested on; None: the event has none
    names: tuple[str, ...] = ()  # exact names (Edit|Write)
    regex: str | None = None  # or a regular expression, searched
    rule: str | None = None  # the handler's `if`, permission rule syntax
    root: str = ""  # the project (the workspace): `/x` and relative paths of `if`
    home: str = ""  # `~/x` of `if`

    def matches(self, payload: Mapping[str, Any]) -> bool:
        if self.rule is not None and (self.field != TOOL_FIELD or not rule_matches(
                self.rule, payload, self.root, self.home)):
            return False
        if self.field is None or (not self.names and self.regex is None):
            return True
        value = payload.get(self.field)
        if not isinstance(value, str):
            return False
        if self.names:
            return value in self.names
        return len(value) <= SUBJECT_LIMIT and _compiled(self.regex).search(value) is not None


def matcher(event: str, text: str, rule: str | None, root: str, home: str) -> Matcher:
    """The filters of one handler: its group's ``matcher`` (MatcherError says what is wrong
    with it) and its own ``if`` (checked by ``check_rule`` first)."""
    field = FIELDS.get(event)
    if text in ("", "*") or field is None:
        return Matcher(text, field, rule=rule, root=root, home=home)
    if _NAMES.fullmatch(text):
        return Matcher(text, field, tuple(n for n in text.split("|") if n), rule=rule,
                       root=root, home=home)
    problem = regex_problem(text)
    if problem is not None:
        raise MatcherError(problem)
    return Matcher(text, field, regex=text, rule=rule, root=root, home=home)


def regex_problem(text: str) -> str | None:
    """Why ``text`` cannot be a matcher's regular expression, or None."""
    if len(text) > PATTERN_LIMIT:
        return f"a regular expression of {len(text)} characters: at most {PATTERN_LIMIT}"
    try:
        re.compile(text)
    except re.error as err:
        return f"not a regular expression initd can read ({err})"
    return _backtracking(text)


def _backtracking(text: str) -> str | None:
    """A repeat over a group that repeats or alternates, or too many unbounded repeats:
    either can make a search take exponential (or high-polynomial) time."""
    groups: list[list[bool]] = [[False, False]]  # per open group: repeats, alternates
    closed: tuple[bool, bool] | None = None  # the group just closed, if a quantifier follows
    unbounded = at = 0
    while at < len(text):
        char, after = text[at], None
        if char == "\\":
            at += 2
        elif char == "[":
            at = _class_end(text, at)
        elif char == "(":
            groups.append([False, False])
            at += 1
            if text.startswith("?", at):  # (?:, (?=, (?P<name>: not a quantifier
                at += 1
        elif char == ")":
            inner = groups.pop() if len(groups) > 1 else [False, False]
            groups[-1][0] |= inner[0]
            groups[-1][1] |= inner[1]
            after, at = (inner[0], inner[1]), at + 1
        elif char == "|":
            groups[-1][1] = True
            at += 1
        elif char in "*+{":
            end = text.find("}", at) + 1 if char == "{" else at + 1
            if char == "{" and (end == 0 or not re.fullmatch(r"\{\d*,?\d*\}", text[at:end])):
                at, closed = at + 1, None  # a literal brace
                continue
            if closed is not None and (closed[0] or closed[1]):
                return ("a repeated group that itself repeats or alternates (like (a+)+ or "
                        "(a|b)*) can take exponential time: write it without the nesting")
            unbounded += 1
            groups[-1][0] = True
            at = end + (1 if text.startswith(("?", "+"), end) else 0)  # lazy, possessive
        else:
            at += 1
        closed = after
    if unbounded > UNBOUNDED_LIMIT:
        return (f"{unbounded} repeats (*, + or {{n,m}}): at most {UNBOUNDED_LIMIT}, so that "
                "a search cannot take high-polynomial time")
    return None


def _class_end(text: str, at: int) -> int:
    """The position after a character class ``[...]`` that starts at ``at``."""
    at += 1
    at += 1 if text.startswith("^", at) else 0
    at += 1 if text.startswith("]", at) else 0
    while at < len(text) and text[at] != "]":
        at += 2 if text[at] == "\\" else 1
    return at + 1


@functools.lru_cache(maxsize=512)
def _compiled(text: str | None) -> re.Pattern[str]:
    return re.compile(text or "")


# --- `if`: permission rule syntax


def check_rule(text: str) -> None:
    """MatcherError when ``text`` is not a permission rule initd can evaluate."""
    tool, content = _parse(text)
    if content is None or content in ("", "*") or tool == "Bash" or tool in _PATH_TOOLS:
        return
    if tool == "WebFetch":
        if not content.startswith("domain:") or not content[7:]:
            raise MatcherError("WebFetch(...) takes domain:HOST (like domain:*.example.com)")
        return
    raise MatcherError(f"initd evaluates {tool}(...) only for Bash, the file tools (Read, "
                       "Edit, Write, MultiEdit, NotebookEdit, Glob, Grep) and "
                       f"WebFetch(domain:...); write {tool} alone to match every use")


def _parse(text: str) -> tuple[str, str | None]:
    found = _RULE.fullmatch(text.strip())
    if found is None:
        raise MatcherError("expected a permission rule: Tool or Tool(specifier), like "
                           "Bash(git commit *) or Edit(*.ts)")
    content = found.group(2)
    return found.group(1), None if content is None else re.sub(r"\\([()\\])", r"\1", content)


def rule_matches(text: str, payload: Mapping[str, Any], root: str, home: str) -> bool:
    tool, content = _parse(text)
    name = payload.get("tool_name")
    if not isinstance(name, str) or not _tool_matches(tool, name):
        return False
    if content is None or content in ("", "*"):
        return True
    given = payload.get("tool_input")
    given = given if isinstance(given, Mapping) else {}
    if tool == "Bash":
        command = given.get("command")
        return isinstance(command, str) and _command_matches(content, command)
    if tool == "WebFetch":
        host = urllib.parse.urlsplit(str(given.get("url", ""))).hostname or ""
        return bool(host) and fnmatch.fnmatchcase(host.lower(), content[7:].lower())
    path = next((given[k] for k in ("file_path", "notebook_path", "path")
                 if isinstance(given.get(k), str)), None)
    return path is not None and _path_matches(content, path, root, home)


def _tool_matches(tool: str, name: str) -> bool:
    if "*" in tool:
        return wildcard(tool, name)
    if tool.startswith("mcp__") and tool.count("__") == 1:  # a server: all its tools
        return name.startswith(f"{tool}__")
    return name in _PATH_TOOLS.get(tool, (tool,))


def _command_matches(content: str, command: str) -> bool:
    pattern = f"{content[:-2]} *" if content.endswith(":*") else content
    return any(wildcard(pattern, part) for part in commands(command))


def commands(command: str) -> list[str]:
    """The command, and each simple command in it, spaces collapsed and leading
    ``NAME=value`` assignments left out."""
    from initd.events.shquote import quote_states

    states = quote_states(command)
    parts, start, at = [], 0, 0
    while at < len(command):
        operator = next((op for op in _OPERATORS if command.startswith(op, at)), None)
        if operator is not None and states[at] == "":
            parts.append(command[start:at])
            start = at = at + len(operator)
        else:
            at += 1
    parts.append(command[start:])
    found = []
    for part in [command, *parts]:
        words = " ".join(part.split())
        bare = _ASSIGNMENT.sub("", words, count=1) if _ASSIGNMENT.match(words) else words
        found += [w for w in (words, bare) if w and w not in found]
    return found


def wildcard(pattern: str, text: str) -> bool:
    """Permission rule wildcards: ``*`` is any text (``\\*`` a star); a trailing `` *`` that
    is the only wildcard also matches the command without it (``git *`` matches ``git``).
    Segments found left to right: linear, whatever the text."""
    segments = [s.replace("\0", "*") for s in pattern.replace("\\*", "\0").split("*")]
    if len(segments) == 1:
        return text == segments[0]
    if len(segments) == 2 and not segments[1] and segments[0].endswith(" ") and \
            text == segments[0][:-1]:
        return True
    first, *middle, last = segments
    end = len(text) - len(last)
    if not text.startswith(first) or not text.endswith(last) or end < len(first):
        return False
    at = len(first)
    for segment in middle:
        found = text.find(segment, at, end)
        if found < 0:
            return False
        at = found + len(segment)
    return True


def _path_matches(content: str, path: str, root: str, home: str) -> bool:
    from initd.hooks import patterns

    if path.startswith("~/") and home:
        path = os.path.join(home, path[2:])
    full = os.path.normpath(os.path.join(root or "/", path))
    if content.startswith("//"):
        pattern = content[1:]
    elif content.startswith("~/"):
        pattern = os.path.join(home, content[2:])
    elif content.startswith("/"):
        pattern = os.path.join(root, content[1:])
    elif "/" in content.rstrip("/"):
        pattern = os.path.join(root, content[2:] if content.startswith("./") else content)
    else:  # a name without a slash: at any depth (gitignore)
        return patterns.matches(content, os.path.basename(full))
    return patterns.matches(pattern, full)
