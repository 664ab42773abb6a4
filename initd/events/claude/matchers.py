"""Claude Code's filters (``.claude/settings.json``): a matcher group's ``matcher`` and a
handler's ``if``, as https://code.claude.com/docs/en/hooks and /en/permissions give them.

``matcher``: ``"*"``, ``""`` or none match every occurrence; only letters, digits, ``_``,
``-``, spaces, ``,`` and ``|`` is an exact name or a list of them (``Edit|Write``,
``Edit, Write``, ``code-reviewer``); anything else is a
regular expression *searched* in the value, as JavaScript's ``RegExp.test`` does
(``^Notebook``, ``mcp__.*``). It is tested on the event's own field (FIELDS): the tool name,
SessionStart's ``source``, SessionEnd's ``reason``, PreCompact's ``trigger``,
Notification's ``notification_type``, SubagentStop's ``agent_type``, the basename of
FileChanged's ``file_path``...; the other events have none (their matcher is ignored, as
Claude Code ignores it). FileChanged's and StopFailure's exact names are letters, digits,
``_`` and ``|`` only (a hyphen, a space or a comma makes a regular expression there). A
payload without that field matches only a matcher that matches everything.

The regular expressions run in the hook service on every event, on values the agent
writes, so they are RE2's (google-re2): linear in the value, whatever the pattern, with
no backtracking to exploit (``(a?){40}a{40}`` is as cheap as ``a``). RE2 reads
JavaScript's ordinary syntax, named groups included, and ``$`` is the end of the value as
in JavaScript; a pattern it cannot compile (a lookaround ``(?=…)``, a backreference
``\1``, a repeat over 1000) is a load error naming the file, the group and the key. It is
imported where a pattern is first compiled: the hook service and the CLI's hook verbs.

``if`` (tool events only; on any other event a hook with ``if`` never runs): permission
rule syntax. ``Bash(git commit *)`` (or the ``:*`` spelling ``Bash(git commit:*)``) is
``git commit`` alone or followed by a space; ``*`` anywhere matches any text;
``Bash(npm test)`` is that command exactly; ``Bash`` and ``Bash(*)`` any. A Bash rule is
tested on every simple command anywhere in the command, as a shell parser reads it, on
what its wrappers run and on the code in strings git runs (shellwords.py, wrappers.py,
gitcode.py); it matches when one of them does, and when the command cannot be read or
can change what a name runs while it runs (rebinding.py) (fail closed: the hook runs, as
Claude Code runs it "when the command is too complex to parse"). ``Edit(*.ts)``, ``Read(//etc/**)``:
gitignore-style paths (``//`` absolute, ``~/`` the home, ``/`` the project, a name without
``/`` at any depth); ``Edit`` covers Write, MultiEdit and NotebookEdit, ``Read`` covers
Glob, Grep and NotebookRead. ``WebFetch(domain:*.example.com)``. ``mcp__server`` is every
tool of that server.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from initd.events.claude import wildcards

if TYPE_CHECKING:
    import re2

PATTERN_LIMIT = 256  # characters of a matcher's regular expression
STEP_LIMIT = 200_000  # characters one rule steps through on a command with holes
FIELDS = {"pre_tool": "tool_name", "post_tool": "tool_name", "post_tool_failure": "tool_name",
          "session_start": "source", "session_end": "reason", "pre_compact": "trigger",
          "notification": "notification_type", "subagent_stop": "agent_type",
          "permission_request": "tool_name", "permission_denied": "tool_name",
          "subagent_start": "agent_type", "setup": "trigger", "config_change": "source",
          "post_compact": "trigger", "elicitation": "mcp_server_name",
          "elicitation_result": "mcp_server_name", "stop_failure": "error",
          "instructions_loaded": "load_reason", "user_prompt_expansion": "command_name",
          "directory_added": "source", "file_changed": "file_path"}
TOOL_FIELD = "tool_name"
BASENAME = "file_path"  # FileChanged's: "against the changed file's basename"
# "Only letters, digits, `_`, `-`, spaces, `,`, and `|`": an exact name, or a list of them
# "separated by `|` or `,` with optional surrounding whitespace" (hyphens since 2.1.195)
_NAMES = re.compile(r"[A-Za-z0-9_|, -]*")
# "FileChanged and StopFailure use a narrower exact-match set of letters, digits, `_`, and
# `|` only. A hyphen, space, or comma ... keeps it on the regular-expression path"
_NARROW = re.compile(r"[A-Za-z0-9_|]*")
NARROW_EVENTS = ("file_changed", "stop_failure")
_RULE = re.compile(r"([A-Za-z0-9_.*-]+)(?:\((.*)\))?", re.DOTALL)
_PATH_TOOLS: dict[str, tuple[str, ...]] = {
    "Edit": ("Edit", "Write", "MultiEdit", "NotebookEdit"),
    "Read": ("Read", "Glob", "Grep", "NotebookRead")}
_PATH_TOOLS.update({tool: (tool,) for tool in ("Write", "MultiEdit", "NotebookEdit", "Glob",
                                               "Grep", "NotebookRead")})


OPTIONAL_PATH = frozenset(("Glob", "Grep"))  # tools whose path Claude Code may leave out


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
        if self.field == BASENAME:
            value = os.path.basename(value)
        if self.names:
            return value in self.names
        try:
            return _compiled(self.regex or "").search(value) is not None
        except UnicodeEncodeError:  # a lone surrogate ("\ud800" is valid JSON): the
            return True  # value cannot be searched, so the hook runs (fail closed)


def matcher(event: str, text: str, rule: str | None, root: str, home: str) -> Matcher:
    """The filters of one handler: its group's ``matcher`` (MatcherError says what is wrong
    with it) and its own ``if`` (checked by ``check_rule`` first)."""
    field = FIELDS.get(event)
    if text in ("", "*") or field is None:
        return Matcher(text, field, rule=rule, root=root, home=home)
    if (_NARROW if event in NARROW_EVENTS else _NAMES).fullmatch(text):
        names = tuple(n.strip() for n in re.split(r"[|,]", text) if n.strip())
        return Matcher(text, field, names, rule=rule, root=root, home=home)
    problem = regex_problem(text)
    if problem is not None:
        raise MatcherError(problem)
    return Matcher(text, field, regex=text, rule=rule, root=root, home=home)


def regex_problem(text: str) -> str | None:
    """Why ``text`` cannot be a matcher's regular expression (RE2's own words), or None."""
    if len(text) > PATTERN_LIMIT:
        return f"a regular expression of {len(text)} characters: at most {PATTERN_LIMIT}"
    import re2

    try:
        _compiled(text)
    except re2.error as err:
        reason = err.args[0] if err.args else err
        if isinstance(reason, bytes):
            reason = reason.decode(errors="replace")
        return (f"not a regular expression RE2 can run ({reason}): initd runs matchers "
                "in linear time, without lookarounds or backreferences")
    except UnicodeEncodeError:
        return "not a regular expression RE2 can run (a lone surrogate)"
    return None


@functools.lru_cache(maxsize=512)
def _compiled(text: str) -> re2._Regexp:
    import re2

    options = re2.Options()
    options.log_errors = False  # the message is the load error's, not a line on stderr
    return re2.compile(text, options)


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
    # a command or URL the format always sends, left out or unreadable, runs the hook
    if tool == "Bash":
        command = given.get("command")
        return not isinstance(command, str) or _command_matches(content, command)
    if tool == "WebFetch":
        try:
            host = urllib.parse.urlsplit(str(given.get("url", ""))).hostname
        except ValueError:  # http://[::1 and the like
            return True
        return not host or fnmatch.fnmatchcase(host.lower(), content[7:].lower())
    path = next((given[k] for k in ("file_path", "notebook_path", "path")
                 if isinstance(given.get(k), str)), None)
    if path is None:  # a path the tool always sends, left out or not text: the hook runs
        return name not in OPTIONAL_PATH  # (Glob's and Grep's path may be left out)
    return _path_matches(content, path, root, home)


def _tool_matches(tool: str, name: str) -> bool:
    if "*" in tool:
        return wildcards.wildcard(tool, name)
    if tool.startswith("mcp__") and tool.count("__") == 1:  # a server: all its tools
        return name.startswith(f"{tool}__")
    return name in _PATH_TOOLS.get(tool, (tool,))


def _command_matches(content: str, command: str) -> bool:
    """Whether the rule matches the command as written (spaces collapsed), or any simple
    command in it, or what a wrapper in front of one runs; True when the command cannot
    be read (the hook runs: fail closed)."""
    from initd.events.claude import wrappers

    pattern = f"{content[:-2]} *" if content.endswith(":*") else content
    if wildcards.wildcard(pattern, " ".join(command.split())):
        return True
    texts = wrappers.candidates(command)
    if texts is None:
        return True
    budget = wildcards.Budget(STEP_LIMIT)
    return any(wildcards.matches(pattern, text, budget) for text in texts)


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
