"""The one error family. The CLI's error boundary turns these into exit code 125."""

from __future__ import annotations


class InitdError(Exception):
    """initd's own fatal error: bad settings, unknown user, cannot fork.

    The message is one line that says what to fix.
    """

    exit_code = 125  # docker and tini use 125 for "the init itself failed"


class UsageError(InitdError):
    """Bad command line: unknown option, bad value, missing command."""


def shown(value: object, limit: int = 80) -> str:
    """A value the agent may have written, as a message may show it (invariant 8): as
    Python writes it (text quoted, everything unprintable escaped), cut at ``limit``
    characters, and a container walked only as far as those characters go (the repr of
    a YAML alias bomb is gigabytes; a crafted text, lines that forge other lines)."""
    budget = [limit]
    text = _shown(value, budget)
    return text if budget[0] >= 0 else text[:limit] + "…"


def _shown(value: object, budget: list[int]) -> str:
    budget[0] -= 1  # every call costs: the walk ends when the budget does
    if budget[0] < 0:
        return ""
    if isinstance(value, str):
        text = repr(value[: budget[0] + 2])
    elif value is None or isinstance(value, bool | float):
        text = repr(value)
    elif isinstance(value, int):
        text = repr(value) if value.bit_length() <= 64 else "<a very large number>"
    elif isinstance(value, list | tuple | dict):
        opener, closer = ("{", "}") if isinstance(value, dict) else \
            ("[", "]") if isinstance(value, list) else ("(", ")")
        parts = []
        for item in value.items() if isinstance(value, dict) else value:
            if budget[0] < 0:
                break
            parts.append(f"{_shown(item[0], budget)}: {_shown(item[1], budget)}"
                         if isinstance(value, dict) else _shown(item, budget))
            budget[0] -= 2
        return opener + ", ".join(parts) + closer
    else:
        text = f"<{type(value).__name__}>"
    budget[0] -= len(text)
    return text


def one_line(text: str) -> str:
    """``text`` (a path the agent named, say) with every unprintable character escaped,
    so that a file called "x\nerror: forged" stays one line of output."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode()
                   for ch in text)
