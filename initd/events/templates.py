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

from initd.events.shquote import COMMENT, HEREDOC, LITERAL, quote_states

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
    states = quote_states(command)
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
    states = quote_states(command)
    for match in PLACEHOLDER.finditer(command):
        if states[match.start()] == LITERAL:
            return (f"placeholder {match.group(0)} is inside a here-document with a quoted "
                    "delimiter (<<'EOF'), where the shell expands nothing: write <<EOF "
                    "instead")
    return None


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
