"""Hook front matter: a YAML block at the top of a hook file (the discobot format).

The block opens with ``---``, ``#---`` or ``//---`` on line 1, or on line 2 after a
shebang, and closes with the same delimiter. In the comment styles every line inside
carries the comment prefix (blank lines excepted), which is stripped before the YAML
is parsed, safely. Pure: text in, a mapping (or None for "no front matter") out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (the guard snapshot's reader imports this module for HEAD_LIMIT)
    from typing import Any

PREFIXES = {"---": "", "#---": "#", "//---": "//"}
HEAD_LIMIT = 64 * 1024  # the block must close within a file's first 64 KiB


class FrontMatterError(ValueError):
    """The file has front matter, but it is broken; the message says where and how."""


def parse(text: str) -> dict[str, Any] | None:
    """The front matter of a hook file's text, or None when it has none."""
    lines = text.removeprefix("\ufeff").splitlines()  # BOM; CRLF and CR via splitlines
    start = 1 if lines and lines[0].startswith("#!") else 0
    if start >= len(lines) or lines[start].strip() not in PREFIXES:
        return None
    opener = lines[start].strip()
    prefix = PREFIXES[opener]
    body: list[str] = []
    for number, line in enumerate(lines[start + 1 :], start + 2):
        if line.strip() == opener:
            break
        body.append(_uncomment(line, prefix, number) if prefix else line)
    else:
        raise FrontMatterError(f"front matter opened by {opener!r} on line {start + 1} is "
                               f"never closed (add a closing {opener!r} line)")
    return _load_yaml("\n".join(body))


def _uncomment(line: str, prefix: str, number: int) -> str:
    stripped = line.lstrip()
    if not stripped:
        return ""
    if not stripped.startswith(prefix):
        raise FrontMatterError(f"line {number}: every line of the front matter must start "
                               f"with {prefix!r} (or is the block never closed?)")
    rest = stripped[len(prefix) :]
    return rest[1:] if rest.startswith(" ") else rest


def _load_yaml(text: str) -> dict[str, Any]:
    import yaml

    from initd.config import safeyaml  # no aliases, bounded depth: root parses these at boot

    try:
        data = safeyaml.load(text)
    except yaml.YAMLError as err:
        where = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or "cannot be parsed"
        at = f" (front matter line {where.line + 1}, column {where.column + 1})" if where else ""
        raise FrontMatterError(f"invalid YAML: {problem}{at}") from None
    except Exception as err:
        # PyYAML's constructors let their own errors out on bad values: ValueError for
        # `2024-02-30` or `!!int lots`, KeyError for `!!bool maybe`, RecursionError for
        # deep nesting... One hook's typo must stay that hook's error (invariant 7).
        raise FrontMatterError(f"invalid YAML value: {type(err).__name__}: {err}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontMatterError(f"expected 'key: value' lines, got a YAML {type(data).__name__}")
    if not all(key is None or isinstance(key, str | int | float) for key in data):
        raise FrontMatterError("every key must be a name (such as 'type')")
    return {str(key): value for key, value in data.items()}
