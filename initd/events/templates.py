"""Placeholders in hooks: ``{{var}}`` (iteratr, AutoAgent), ``{file}`` (nyzhi) and
``${VAR}`` (agent-pipelines).

In a shell command a value never becomes shell text. Each placeholder is replaced by a
reference to an environment variable that holds the value (``"${INITD_V_1}"``, written
for the quotes it lands in), and the shell does not parse what an expansion yields: a
value with ``'``, ``"``, spaces, newlines, ``$(…)``, backticks or ``;`` is one word of
data, in every quoting context, ``"$(echo {{x}})"`` included. Elsewhere values go in as
the target needs: percent-encoded in a URL (except a placeholder that starts it, like
``${SLACK_WEBHOOK}``), as they are in a JSON body (serialising escapes them) or a commit
message (an argv, no shell). A placeholder with no value stays as written; the caller
warns once.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Callable
from typing import Any

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}|\$\{([A-Za-z_]\w*)\}|\{(file)\}")
PREFIX = "INITD_V_"
MISSING = object()
Lookup = Callable[[str, str], Any]  # (kind: "{{}}" | "${}" | "{}", name) -> value or MISSING


def text(value: Any) -> str:
    """A value as text: lists space-joined (AutoAgent's arrays), objects as JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return " ".join(text(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _kind(match: re.Match[str]) -> tuple[str, str]:
    if match.group(1) is not None:
        return "{{}}", match.group(1)
    if match.group(2) is not None:
        return "${}", match.group(2)
    return "{}", "file"


class TemplateError(ValueError):
    """A placeholder where no reference can carry a value (a quoted here-document)."""


def shell(command: str, lookup: Lookup) -> tuple[str, dict[str, str], list[str]]:
    """(the command with references, the variables they name, placeholders left as written).
    TemplateError for a placeholder inside a here-document whose delimiter is quoted
    (``<<'EOF'``): the shell expands nothing there, so no value could arrive."""
    env: dict[str, str] = {}
    unknown: list[str] = []
    out: list[str] = []
    at = 0
    states = _quote_states(command)
    for match in PLACEHOLDER.finditer(command):
        state = states[match.start()]
        if state == LITERAL:
            raise TemplateError(check(command))
        value = lookup(*_kind(match))
        out.append(command[at:match.start()])
        at = match.end()
        if value is MISSING:
            unknown.append(match.group(0))
            out.append(match.group(0))
            continue
        name = f"{PREFIX}{len(env) + 1}"
        env[name] = text(value)
        # In single quotes: close them, a double-quoted reference, reopen. In double
        # quotes, a here-document's body or a comment: the bare reference (quotes would be
        # literal text in a here-document). Elsewhere: a double-quoted reference.
        out.append({"'": f"'\"${{{name}}}\"'", '"': f"${{{name}}}", HEREDOC: f"${{{name}}}",
                    COMMENT: f"${{{name}}}"}.get(state, f'"${{{name}}}"'))
    out.append(command[at:])
    return "".join(out), env, unknown


def check(command: str) -> str | None:
    """Why the placeholders of a shell command cannot work (for a load error), or None."""
    states = _quote_states(command)
    for match in PLACEHOLDER.finditer(command):
        if states[match.start()] == LITERAL:
            return (f"placeholder {match.group(0)} is inside a here-document with a quoted "
                    "delimiter (<<'EOF'), where the shell expands nothing: write <<EOF "
                    "instead")
    return None


# The states _quote_states gives a position, besides "" (unquoted), "'" and '"'.
COMMENT = "#"  # after an unquoted # that starts a word, to the end of the line
HEREDOC = "<<"  # a here-document's body: expanded, but its quotes are plain text
LITERAL = "<<'"  # a here-document's body whose delimiter was quoted: nothing expanded
_WORD_END = " \t\n;&|()<>"


class _Frame:
    """One level of nesting: the top, a ``$(…)``/backquoted command, or a here-document's
    body (where quotes are plain text, but ``$(…)`` and backquotes still run)."""

    def __init__(self, opener: str = "", heredoc: bool = False) -> None:
        self.opener = opener  # "" | "$(" | "`"
        self.heredoc = heredoc
        self.quote = ""  # "" | "'" | '"'
        self.parens = 0  # "(" opened inside it, not yet closed


def _quote_states(command: str, heredoc: bool = False) -> list[str]:
    """For each position: "" outside quotes, "'" inside single, '"' inside double quotes,
    COMMENT in a comment, HEREDOC or LITERAL in a here-document's body, as sh reads it: a
    ``$(…)`` or a backquoted command starts afresh, unquoted, even inside double quotes;
    a quote inside a comment or a here-document opens nothing (a comment such as ``# it's``
    once made every later placeholder look quoted)."""
    states: list[str] = []
    frames = [_Frame(heredoc=heredoc)]
    pending: list[tuple[str, bool, bool]] = []  # here-documents opened on this line
    escaped = False
    at = 0
    while at < len(command):
        char, frame = command[at], frames[-1]
        plain = not frame.quote and not escaped
        if plain and not frame.heredoc and char == "#" and (
                at == 0 or command[at - 1] in _WORD_END):
            end = command.find("\n", at)
            end = len(command) if end < 0 else end
            states += [COMMENT] * (end - at)
            at = end
            continue
        if plain and not frame.heredoc and command.startswith("<<", at) and \
                not command.startswith("<<<", at):
            opened = _heredoc_operator(command, at + 2)
            if opened is not None:
                end, delimiter, strip, quoted = opened
                pending.append((delimiter, strip, quoted))
                states += [""] * (end - at)
                at = end
                continue
        if plain and char == "\n" and pending:
            states.append(frame.quote)
            at += 1
            for delimiter, strip, quoted in pending:
                at = _heredoc_body(command, at, delimiter, strip, quoted, states)
            pending = []
            continue
        states.append(HEREDOC if frame.heredoc and not frame.quote else frame.quote)
        if escaped:
            escaped = False
        elif frame.quote == "'":
            if char == "'":
                frame.quote = ""
        elif char == "\\":
            escaped = True
        elif char == "$" and command[at + 1 : at + 2] == "(":
            states.append(states[-1])  # the "(" itself
            frames.append(_Frame("$("))
            at += 2
            continue
        elif char == "`":
            if frame.opener == "`" and not frame.quote:
                frames.pop()
            else:
                frames.append(_Frame("`"))
        elif frame.quote == '"':
            if char == '"':
                frame.quote = ""
        elif frame.heredoc:
            pass  # quotes and parentheses are plain text in a here-document's body
        elif char in "'\"":
            frame.quote = char
        elif char == "(":
            frame.parens += 1
        elif char == ")":
            if frame.parens:
                frame.parens -= 1
            elif frame.opener == "$(" and len(frames) > 1:
                frames.pop()
        at += 1
    return states


def _heredoc_operator(command: str, at: int) -> tuple[int, str, bool, bool] | None:
    """After ``<<``: (where the delimiter word ends, the delimiter, ``<<-``, quoted)."""
    strip = command.startswith("-", at)
    at += strip
    while at < len(command) and command[at] in " \t":
        at += 1
    word: list[str] = []
    quoted = False
    while at < len(command) and command[at] not in _WORD_END:
        char = command[at]
        if char in "'\"":
            quoted = True
            close = command.find(char, at + 1)
            close = len(command) if close < 0 else close
            word.append(command[at + 1 : close])
            at = close + 1
        elif char == "\\":
            quoted = True
            word.append(command[at + 1 : at + 2])
            at += 2
        else:
            word.append(char)
            at += 1
    delimiter = "".join(word)
    return (at, delimiter, strip, quoted) if delimiter else None


def _heredoc_body(command: str, at: int, delimiter: str, strip: bool, quoted: bool,
                  states: list[str]) -> int:
    """The states of a here-document's body from ``at`` through its delimiter line; where
    the command goes on after it."""
    body_start = at
    while at < len(command):
        end = command.find("\n", at)
        end = len(command) if end < 0 else end
        line = command[at:end]
        if (line.lstrip("\t") if strip else line) == delimiter:
            break
        at = min(end + 1, len(command))
    body = command[body_start:at]
    states += [LITERAL] * len(body) if quoted else _quote_states(body, heredoc=True)
    end = command.find("\n", at)
    end = len(command) if end < 0 else end + 1
    states += [""] * (end - at)  # the delimiter line
    return end


def inline(template: str, lookup: Lookup, encode: Callable[[str], str] = str,
           ) -> tuple[str, list[str]]:
    """Values written into the text (``encode``d); unknown placeholders left as written."""
    unknown: list[str] = []

    def put(match: re.Match[str]) -> str:
        value = lookup(*_kind(match))
        if value is MISSING:
            unknown.append(match.group(0))
            return match.group(0)
        return encode(text(value)) if match.start() > 0 else text(value)
    return PLACEHOLDER.sub(put, template), unknown


def url(template: str, lookup: Lookup) -> tuple[str, list[str]]:
    """A URL: a placeholder that starts it is taken whole (it is the URL, from config or the
    environment); any later one is percent-encoded, so it cannot add a path, a query or
    a host."""
    return inline(template, lookup, lambda value: urllib.parse.quote(value, safe=""))


def data(value: Any, lookup: Lookup) -> tuple[Any, list[str]]:
    """Placeholders in every text of a JSON-like structure (a webhook body, spawn inputs);
    the structure is serialised afterwards, which escapes them."""
    unknown: list[str] = []
    if isinstance(value, str):
        done, unknown = inline(value, lookup, str)
        return done, unknown
    if isinstance(value, list):
        items = []
        for item in value:
            done, missing = data(item, lookup)
            items.append(done)
            unknown += missing
        return items, unknown
    if isinstance(value, dict):
        result = {}
        for key, item in value.items():
            done, missing = data(item, lookup)
            result[key] = done
            unknown += missing
        return result, unknown
    return value, unknown
