"""How a setting's text (a flag, a variable, a config file's value) becomes its value:
each parser raises ValueError saying what was expected; settings.py adds where the bad
value came from."""

from __future__ import annotations

import os
from collections.abc import Mapping
from enum import StrEnum
from typing import TYPE_CHECKING

from initd.process.limits import Limits

if TYPE_CHECKING:
    from collections.abc import Sequence


class Restart(StrEnum):
    NEVER = "never"  # tini-compatible: the agent's exit is the container's exit
    ON_FAILURE = "on-failure"  # restart after a non-zero exit or a death by signal
    ALWAYS = "always"


# --- value parsers: text (or a YAML scalar) -> typed value; ValueError says what was expected


def seconds(value: object) -> float:
    try:
        number = float(str(value))
    except ValueError:
        raise ValueError("expected a number of seconds, e.g. 8 or 0.5") from None
    if not number >= 0:  # also rejects NaN
        raise ValueError("expected a number of seconds >= 0")
    return number


def stop_signal(value: object) -> int:
    """TERM, SIGTERM or 15: a signal PID 1 forwards (so not KILL, STOP, CHLD or a fault)."""
    import signal

    from initd.pid1.signals import FORWARDED

    text = str(value).strip().upper()
    name = text if text.startswith("SIG") else f"SIG{text}"
    try:
        number = int(text) if text.isdigit() else int(signal.Signals[name])
    except KeyError:
        number = 0
    if number not in FORWARDED:
        raise ValueError("expected a signal initd forwards, by name or number, e.g. TERM, "
                         "INT or 15 (not KILL, STOP or CHLD)")
    return number


def count(value: object) -> int:
    text = str(value)
    if not text.isdigit():
        raise ValueError("expected a whole number >= 0")
    return int(text)


def remap(value: object) -> tuple[int, int]:
    parts = str(value).split(":")
    if len(parts) != 2 or not all(p.isdigit() and int(p) <= 255 for p in parts):
        raise ValueError("expected FROM:TO with exit codes 0-255, e.g. 143:0")
    return int(parts[0]), int(parts[1])


def remaps(value: object) -> tuple[tuple[int, int], ...]:
    """``143:0,1:0`` or ``143:0 1:0`` (environment), a list or a mapping (YAML)."""
    if isinstance(value, Mapping):
        items: Sequence[object] = [f"{k}:{v}" for k, v in value.items()]
    elif isinstance(value, list | tuple):
        items = value
    else:
        items = str(value).replace(",", " ").split()
    return tuple(remap(item) for item in items)


def restart(value: object) -> Restart:
    try:
        return Restart(str(value))
    except ValueError:
        raise ValueError("expected one of never, on-failure, always") from None


def log_format(value: object) -> str:
    text = str(value)
    if text not in ("json", "console", "auto"):
        raise ValueError("expected json, console or auto")
    return text


def paths(value: object) -> tuple[str, ...]:
    """A list (YAML), or ``a:b`` separated like PATH (environment)."""
    items = value if isinstance(value, list | tuple) else str(value).split(os.pathsep)
    return tuple(str(item) for item in items if str(item))


def names(value: object) -> tuple[str, ...]:
    """Variable names: a list (YAML), or comma/space separated (environment)."""
    items = value if isinstance(value, list | tuple) else str(value).replace(",", " ").split()
    return tuple(str(item) for item in items)


def port(value: object) -> int:
    text = str(value)
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError("expected a TCP port number from 1 to 65535")
    return int(text)


def url(value: object) -> str:
    """An http(s) URL with a host."""
    import urllib.parse  # only when a URL is really given

    text = str(value)
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("expected an http:// or https:// URL, e.g. http://127.0.0.1:8080/health")
    try:
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        raise ValueError("expected a port number from 1 to 65535 in the URL") from None
    return text


def path(value: object) -> str:
    """A path, made absolute once, here: the hook service runs from / (an isolated start,
    invariant 8), so a relative path would name another place there. Kept as text:
    pathlib would be one more import on every boot."""
    text = str(value)
    if not text:
        raise ValueError("expected a path")
    return os.path.abspath(text)


def session_ident(value: object) -> str:
    """A session id names a directory in ~/.discobot: one plain name, never a way out."""
    text = str(value)
    if not (0 < len(text) <= 128 and text[0].isascii() and text[0].isalnum()
            and all(c.isascii() and (c.isalnum() or c in "._-") for c in text)):
        raise ValueError("expected a session id of at most 128 letters, digits, '.', '_' "
                         "or '-', starting with a letter or digit (it names a directory in "
                         "~/.discobot)")
    return text


def boolean(value: object) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false (1/0, yes/no, on/off)")


def optional_text(value: object) -> str | None:
    return str(value) or None


def hook_limits(value: object) -> Limits:
    """initd.yaml's mapping, or the environment's ``cpu=60,memory=2G``."""
    from initd.process import limits

    try:
        return limits.parse_text(value) if isinstance(value, str) else limits.parse(value)
    except limits.LimitError as err:
        raise ValueError(str(err).removeprefix("limits: ")) from None
