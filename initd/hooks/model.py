"""A validated hook: the front matter's fields checked into one frozen record.

Every error names the key and what was expected; the caller adds the file. Defaults are
docs/discobot-hooks.md's ("Hook files"). Only the exact value ``run_as: root`` runs a hook
as root (discobot's Go init ran anything but the exact "user" as root, typos included).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from initd.config.fields import Fields
from initd.config.problems import LoadError
from initd.errors import shown
from initd.hooks import kinds
from initd.hooks.kinds import TYPES
from initd.process import limits
from initd.process.limits import NONE as NO_LIMITS
from initd.process.limits import Limits

DEFAULT_TIMEOUT = {"session": 300.0, "file": 900.0, "pre-commit": 900.0}
EVENT_TIMEOUT = 60.0  # a hook whose type names a lifecycle event (Claude Code's, AutoAgent's)
KNOWN_KEYS = frozenset({"name", "type", "description", "run_as", "pattern", "notify_llm",
                        "timeout", "blocking", "limits"})
# an event hook's own fields, checked by the events engine (initd/events/dialects/discobot.py)
EVENT_KEYS = frozenset({"block", "tool_name", "when", "on_failure", "retries",
                        "retry_delay", "on_error"})
ID = re.compile(r"[a-z0-9_-]{1,255}")  # what hook_id makes: a plain file name, always
SCRIPT_EXTENSIONS = (".sh", ".bash", ".zsh", ".py", ".js", ".ts", ".rb", ".pl", ".php")


class HookError(LoadError):
    """A field is wrong: the message names the key and what it expects."""


class Hook(NamedTuple):
    id: str
    name: str
    type: str
    path: str
    directory: str  # the hook directory it was found in (the image's or the workspace's)
    description: str = ""
    run_as: str = "user"
    pattern: str | None = None
    notify_llm: bool = True
    timeout: float = 300.0
    blocking: bool = True
    warnings: tuple[str, ...] = ()
    options: tuple[tuple[str, Any], ...] = ()  # an event hook's EVENT_KEYS, as written
    limits: Limits = NO_LIMITS  # its own; the image's (initd.yaml) fill the rest

    @property
    def is_event(self) -> bool:
        return self.type not in TYPES


def hook_id(filename: str) -> str:
    """discobot's normalizeHookID: ``foo.bar.sh`` -> ``foo-bar``, ``test (1).sh`` -> ``test1``."""
    for ext in SCRIPT_EXTENSIONS:
        if filename.lower().endswith(ext):
            filename = filename[: -len(ext)]
            break
    return re.sub(r"[^a-z0-9_-]", "", filename.replace(".", "-").lower()).strip("-")


def validate(fields: dict[str, Any], path: str, directory: str, filename: str) -> Hook:
    """Check ``fields`` (parsed front matter) and build the Hook, or raise HookError (a
    LoadError) naming the key; the caller adds the file."""
    f = Fields(fields, "", None, width=80, nulls=False, error=HookError)
    kind = f.text("type", typed=True)
    if kind is None:
        raise f.error("type", "required")
    event = None
    if kind not in TYPES:
        event = kinds.resolve(kind)
        if event is None:
            raise HookError(f"type: expected one of {', '.join(TYPES)} or an event "
                            f"({kinds.known()}), got {shown(kind)}")
    known = KNOWN_KEYS | EVENT_KEYS if event is not None else KNOWN_KEYS
    warnings = [f"unknown key {shown(key, 40)} ignored (known: {', '.join(sorted(known))})"
                for key in fields if key not in known]
    # Present means exactly one of the two: `run_as: ""`, `run_as:` (null) or `Root` is
    # a mistake, never quietly the default (discobot's Go init ran typos as root).
    run_as = fields.get("run_as", "user")
    if not isinstance(run_as, str) or run_as not in ("root", "user"):
        raise HookError(f"run_as: expected exactly 'root' or 'user', got {shown(run_as)}")
    if event is not None:
        kind = event.name
        if run_as == "root":
            raise HookError("run_as: root is for blocking session hooks; a hook on an "
                            f"event ({kind}) runs as the agent user")
    pattern = f.text("pattern", typed=True)
    if kind == "file" and not pattern:
        raise HookError("pattern: required for a file hook (e.g. pattern: \"*.go\")")
    if kind in ("session", "pre-commit") and pattern is not None:
        raise HookError(f"pattern: only file hooks take a pattern (this is a {kind} hook)")
    if "blocking" in fields and kind != "session":
        warnings.append(f"blocking: only session hooks use it; ignored on a {kind} hook")
    blocking = f.flag("blocking", True)
    if run_as == "root":
        _root_allowed(kind, blocking)
    ident = hook_id(filename)
    if not ident:
        raise HookError(f"file name {shown(filename)} leaves no usable hook id "
                        "([a-z0-9_-])")
    return Hook(
        id=ident,
        name=f.text("name", typed=True) or filename,
        type=kind,
        path=path,
        directory=directory,
        description=f.text("description", typed=True) or "",
        run_as=run_as,
        pattern=pattern,
        notify_llm=f.flag("notify_llm", True),
        timeout=f.number("timeout", DEFAULT_TIMEOUT.get(kind, EVENT_TIMEOUT), unit="seconds",
                         width=40),
        blocking=blocking,
        limits=_limits(fields),
        warnings=tuple(warnings),
        options=tuple((k, fields[k]) for k in sorted(EVENT_KEYS) if k in fields)
        if event is not None else (),
    )


def _root_allowed(kind: str, blocking: bool) -> None:
    """Root runs the workspace's code only before the agent runs (ARCHITECTURE.md,
    invariant 11): a blocking session hook, which ends before the agent's first
    instruction. A file hook runs while the agent is live, on files, lists and a cwd the
    agent controls; a background session hook would still be running as root once the
    agent is. Refused when the hook loads, with the fix, rather than run another way."""
    if kind == "file":
        raise HookError("run_as: root: file hooks run as the agent; move root work to a "
                        "blocking session hook (type: session), which runs before the "
                        "agent starts")
    if kind == "session" and not blocking:
        raise HookError("run_as: root with blocking: false: a root session hook must end "
                        "before the agent starts; remove blocking: false (it then runs "
                        "before the agent) or make it run_as: user")


def _limits(fields: dict[str, Any]) -> Limits:
    try:
        return limits.parse(fields.get("limits"))
    except limits.LimitError as err:
        raise HookError(str(err)) from None
