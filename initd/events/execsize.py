"""What exec takes. Linux refuses (E2BIG) one argument or variable over MAX_ARG_STRLEN
(32 pages, its NUL included) and all of them together over ARG_MAX (a quarter of the
stack limit: 2 MiB by default). A payload's values are left out of a hook's environment
past these (variables.py); what still would not fit (a placeholder's value in a command)
is the hook's error, said before exec is tried, and it blocks a blockable event
(invariant 12): a guard that could not start never lets the action through."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Mapping

STRING_LIMIT = 32 * 4096  # bytes of one argument or NAME=value, its NUL included
POINTER = 8  # each string also costs exec its pointer


def size(text: str) -> int:
    """What one argument or NAME=value costs exec."""
    return len(text.encode("utf-8", "surrogateescape")) + 1 + POINTER


def arg_max() -> int:
    try:
        limit = os.sysconf("SC_ARG_MAX")
    except (OSError, ValueError):
        limit = -1
    return limit if limit > 0 else 2 * 2**20


def too_big(argv: Iterable[str], env: Mapping[str, str]) -> str | None:
    """Why exec would refuse ``argv`` with ``env`` (E2BIG), or None."""
    named = [(f"argument {n}", text) for n, text in enumerate(argv)] + \
        [(f"variable {name}", f"{name}={value}") for name, value in env.items()]
    for what, text in named:
        if size(text) - POINTER > STRING_LIMIT:
            return (f"its {what[:70]} is over {STRING_LIMIT // 1024} KiB, more than exec "
                    "takes (E2BIG); a payload's values are on stdin")
    total = sum(size(text) for _, text in named)
    if total > arg_max():
        return (f"its arguments and environment are {total} bytes, more than exec takes "
                f"({arg_max()}: E2BIG); a payload's values are on stdin")
    return None


def refused(exec_error: str | None) -> bool:
    """Did exec fail for the size of what it was given (a limit we did not foresee)?"""
    return exec_error is not None and os.strerror(errno.E2BIG) in exec_error
