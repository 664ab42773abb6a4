"""File-hook patterns (docs/discobot-hooks.md, "File hooks"): globs over workspace-relative
paths, by wcmatch.

``**``, ``{a,b}`` braces, extglob and ``!`` negation; dot files only when named. A pattern
without ``/`` matches the base name at any depth (``*.go`` matches ``cmd/x/main.go``, as
a reader of discobot's hooks spec's examples expects; picomatch's default would not); one with ``/``
is anchored at the workspace root. Checked against picomatch in the reference notes.
"""

from __future__ import annotations

from collections.abc import Iterable

from wcmatch import glob

FLAGS = glob.GLOBSTAR | glob.BRACE | glob.EXTGLOB | glob.NEGATE | glob.MATCHBASE


def matches(pattern: str, path: str) -> bool:
    return bool(glob.globmatch(path, pattern, flags=FLAGS))


def matching(pattern: str, paths: Iterable[str]) -> list[str]:
    return [path for path in paths if matches(pattern, path)]
