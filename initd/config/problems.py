"""One Problem type for every format initd reads (hook front matter, devcontainer.json,
every dialect's config): which file, which key, what is wrong, how bad. ``initd hooks
list|check``, the boot's log and the control API show each one as ``severity: file: key:
reason``; a loader that stops at a problem raises it as a LoadError."""

from __future__ import annotations

from typing import NamedTuple

from initd.errors import one_line

ERROR, WARNING, NOTE = "error", "warning", "note"


class Problem(NamedTuple):
    path: str  # the file; "" for what is no file's (an image without bash)
    key: str | None  # the key (``remoteEnv.PATH``, ``hooks.Stop[0].timeout``), or None
    reason: str
    severity: str = ERROR  # ERROR: the hook (or file) is broken; WARNING; NOTE: not a hook

    @property
    def text(self) -> str:
        """``file: key: reason``, as written (the agent's names unescaped)."""
        return ": ".join(part for part in (self.path, self.key, self.reason) if part)

    def __str__(self) -> str:
        return one_line(self.text)  # a name with a newline never forges a second line

    def line(self) -> str:
        return f"{self.severity}: {self}"


class LoadError(ValueError):
    """A file, or one entry in it, is wrong: its problem says where and how."""

    def __init__(self, reason: str, path: str = "", key: str | None = None) -> None:
        self.problem = Problem(path, key, reason)
        super().__init__(self.problem.text)
