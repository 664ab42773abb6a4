"""initd's results as JSON, in one casing: camelCase, as the hooks' ``status.json`` has
always been (``lastExitCode``, ``hookId``). A record's field names (a NamedTuple's)
become camelCase; a mapping's keys are data (hook ids, a payload's keys, an action's
own fields) and stay as they are; an enum is its value. Every answer of the control API
and every JSON the CLI prints goes through here (service/views.py) or a view built
here, so no result has two spellings."""

from __future__ import annotations

from enum import Enum
from typing import Any


def camel(name: str) -> str:
    """``exit_code`` -> ``exitCode``; ``id`` stays ``id``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def view(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {camel(field): view(item) for field, item in zip(value._fields, value,
                                                                strict=True)}
    if isinstance(value, list | tuple):
        return [view(item) for item in value]
    if isinstance(value, dict):
        return {key: view(item) for key, item in value.items()}
    return value
