"""One field checker for every format initd reads: discobot front matter, devcontainer.json
and every dialect's config. Each field is checked as it is taken; a wrong one is a
LoadError whose problem names the file, the key and what was expected; fields no one took
are warnings (a typo, usually)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from initd.config.problems import LoadError
from initd.errors import shown


class Fields:
    """One entry's fields (``data``), in ``source`` ("": the caller names the file) at
    ``key`` (None: the entry is the file's top, as front matter is). ``width``: how much
    of a wrong value a message shows; ``nulls``: a flag or number written as null is
    unset (a config's), or wrong (front matter's and devcontainer.json's: ``timeout:``
    left empty is a mistake); ``error``: the LoadError it raises."""

    def __init__(self, data: object, source: str, key: str | None,
                 width: int = 57, nulls: bool = True,
                 error: type[LoadError] = LoadError) -> None:
        self.width, self.nulls, self.kind = width, nulls, error
        if not isinstance(data, Mapping):
            raise error(f"expected a mapping of fields, got {type(data).__name__} "
                            f"{shown(data, width)}", source, key)
        self.data = data
        self.source = source
        self.key = key
        self.used: set[str] = set()

    def error(self, name: str, message: str) -> LoadError:
        return self.kind(message, self.source, f"{self.key}.{name}" if self.key else name)

    def get(self, name: str) -> Any:
        self.used.add(name)
        return self.data.get(name)

    def unset(self, name: str, value: object) -> bool:
        return value is None and (self.nulls or name not in self.data)

    def text(self, name: str, default: str | None = None, required: bool = False,
             typed: bool = False) -> Any:
        """Text; ``typed``: a wrong value's message names its type too."""
        value = self.get(name)
        if value is None:
            if required:
                raise self.error(name, "required")
            return default
        if not isinstance(value, str) or (required and not value.strip()):
            kind = f"{type(value).__name__} " if typed else ""
            raise self.error(name, f"expected text, got {kind}{self._shown(value)}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        value = self.get(name)
        if self.unset(name, value):
            return default
        if not isinstance(value, bool):
            raise self.error(name, f"expected true or false, got {self._shown(value)}")
        return value

    def number(self, name: str, default: float, scale: float = 1.0, positive: bool = True,
               whole: bool = False, unit: str | None = None, below: float = math.inf,
               width: int | None = None) -> float:
        """A number (``> 0``, or ``>= 0`` unless ``positive``) under ``below``, times
        ``scale``; ``unit`` names it in the message (``a number of seconds``)."""
        value = self.get(name)
        if self.unset(name, value):
            return default
        try:
            number = float(value) if isinstance(value, int | float) else math.nan
        except OverflowError:  # an integer of 400 digits
            number = math.inf
        ok = not isinstance(value, bool) and (number > 0 if positive else number >= 0) \
            and number < below
        if not ok or (whole and not isinstance(value, int)):
            kind = "a whole number" if whole else "a number"
            kind += f" of {unit}" if unit else ""
            raise self.error(name, f"expected {kind} {'> 0' if positive else '>= 0'}, got "
                             f"{shown(value, width or self.width)}")
        return number * scale

    def choice(self, name: str, choices: Iterable[str], default: str) -> str:
        value = self.get(name)
        if value is None:
            return default
        options = tuple(choices)
        if value not in options:
            raise self.error(name, f"expected one of {', '.join(options)}, got "
                             f"{self._shown(value)}")
        return str(value)

    def names(self, name: str) -> tuple[str, ...]:
        """A comma-separated list (``*.ts,*.tsx``), or a list."""
        value = self.get(name)
        if value is None:
            return ()
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise self.error(name, f"expected text (comma-separated) or a list of texts, "
                             f"got {self._shown(value)}")
        return tuple(item.strip() for item in items if item.strip())

    def mapping(self, name: str) -> dict[str, Any] | None:
        value = self.get(name)
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise self.error(name, f"expected a mapping, got {self._shown(value)}")
        return dict(value)

    def unknown(self) -> tuple[str, ...]:
        """Warnings for fields nobody asked for (a typo, usually)."""
        return tuple(f"{self.key}: unknown key {shown(name, 40)} ignored" for name in self.data
                     if name not in self.used)

    def _shown(self, value: object) -> str:
        return shown(value, self.width)
