"""What every dialect loader shares: reading a config file, and checking its fields with
errors that name the file, the hook and the key, and say what was expected."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from initd.config.fields import Fields
from initd.config.problems import WARNING, LoadError, Problem
from initd.errors import shown
from initd.events import conditions, model
from initd.events.model import DISCOBOT, DialectName
from initd.events.sources import CONFIG_LIMIT
from initd.hooks import kinds


def read(path: str, fmt: str) -> Any:
    """The parsed file (``fmt``: yaml, toml, json or jsonc), or None when there is none; a file
    that does not parse, is not a regular file or is over CONFIG_LIMIT is a LoadError
    naming it. (Root reads these too, for ``initd hooks list|check|trust``: a FIFO or a
    YAML alias bomb must cost it nothing.)"""
    from initd.hooks import workspacefiles
    from initd.state import agentfs

    try:  # (under a verb's guard, through the door: no link, the owner's files only)
        raw, _ = workspacefiles.read(path, CONFIG_LIMIT, whole=True)
        text = raw.decode("utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except agentfs.Unsafe as err:  # says the path and why (over CONFIG_LIMIT, a FIFO)
        raise LoadError(str(err).removeprefix(f"{path}: "), path) from None
    except (OSError, UnicodeDecodeError) as err:
        raise LoadError(f"cannot read: {err}", path) from None
    try:
        if fmt == "yaml":
            from initd.config import safeyaml

            return safeyaml.load(text)
        if fmt == "toml":
            import tomllib

            return tomllib.loads(text)
        if fmt == "jsonc":  # JSON with comments (Gemini CLI's settings.json)
            from initd.config import jsonc

            return json.loads(jsonc.strip(text))
        return json.loads(text)
    except Exception as err:  # yaml, toml and json each raise their own kind
        raise LoadError(f"not valid {fmt.upper()}: {err}", path) from None


class EventFields(Fields):
    """An event hook's fields: the checker every format shares, and the two only event
    hooks have (a templated command, a ``when`` condition)."""

    def command(self, name: str) -> str:
        """A shell command whose placeholders can all be filled (templates.check)."""
        from initd.events import templates

        command: str = self.text(name, required=True)
        problem = templates.check(command)
        if problem is not None:
            raise self.error(name, problem)
        return command

    def condition(self, name: str) -> conditions.Condition | None:
        value = self.get(name)
        if value is None:
            return None
        try:
            return conditions.parse(value)
        except conditions.ConditionError as err:
            raise self.error(name, f"bad condition {_short(value)}: {err}") from None


def named(name: object) -> str | None:
    """The event a hook names, as a stand-in is on it (model.StandIn): the event; None
    for a name that is no event initd fires (a typo, another tool's event: ``initd hooks
    check`` fails on it); BLOCKABLE when it names none (the field is missing)."""
    if not isinstance(name, str):
        return model.BLOCKABLE
    event = kinds.resolve(name)
    return None if event is None else event.name


def event_of(name: object, source: str, key: str) -> kinds.Event:
    """The event a config names; an unknown name is an error where it is written."""
    event = kinds.resolve(name) if isinstance(name, str) else None
    if event is None:
        raise LoadError(f"unknown event {_short(name)} (known: {kinds.known()}, or an "
                        "alias of one)", source, key)
    return event


def _short(value: object) -> str:
    return shown(value, 57)

# what an agent's hooks config has for each event: Claude Code's and Codex's list
MATCHER_GROUPS = 'matcher groups ([{"matcher": ..., "hooks": [...]}])'


class Collected:
    """What loading found: hooks, problems (one per broken hook or file), the stand-ins
    of the hooks that did not load, and the child pipelines ``spawn`` may name."""

    def __init__(self, dialect: DialectName = DISCOBOT) -> None:
        self.dialect = dialect
        self.hooks: list[model.EventHook] = []
        self.problems: list[Problem] = []
        # what did not load and may be an event hook (a hooks directory not read whole
        # too): an error on the events it may be on, blocking a blockable one (standins)
        self.unread: list[model.StandIn] = []
        self.pipelines: dict[str, dict[str, Any]] = {}

    def error(self, path: str, err: LoadError, event: str | None = model.BLOCKABLE) -> None:
        """A problem; unless ``event`` is None (plainly no event hook's), also a stand-in
        on ``event`` (BLOCKABLE: which one is not known)."""
        self.problems.append(err.problem)
        if event is not None:
            self.unread.append(model.StandIn(path, str(err), event, self.dialect))

    def events(self, path: str, hooks: object, what: str, single: bool = False
               ) -> Iterator[tuple[kinds.Event, str, list[Any]]]:
        """(event, key, its list) for each entry of a ``hooks`` mapping; an unknown event,
        or a value that is not a list (one entry may stand alone, with ``single``), is
        that entry's problem and the others go on."""
        if not isinstance(hooks, Mapping):
            self.error(path, LoadError(f"expected a mapping of event: [{what}]", path,
                                       "hooks"))
            return
        for name, entries in hooks.items():
            key = f"hooks.{name}"
            try:
                event = event_of(name, path, key)
            except LoadError as err:  # no event initd fires is this entry's: no stand-in
                self.error(path, err, event=None)
                continue
            if single and isinstance(entries, dict | str):
                entries = [entries]
            if not isinstance(entries, list):
                self.error(path, LoadError(f"expected a list of {what}", path, key),
                           event=event.name)
                continue
            yield event, key, entries

    def agent_entries(self, path: str, name: object, entries: object,
                      events: Mapping[str, str], title: str, what: str
                      ) -> Iterator[tuple[str, str, object]]:
        """(initd's event, key, entry) for each entry of one event's list in an agent's
        own hooks config (Claude Code's matcher groups, Codex's, Gemini CLI's definitions,
        Cursor's hooks): a name the agent has no event for is one error naming the file
        and the name (a typo in a guard's event is never silent; no stand-in: no event of
        initd's is its), a value that is no list the event's error, standing in on it."""
        key = f"hooks.{name}"
        event = events.get(name) if isinstance(name, str) else None
        if event is None:
            self.error(path, LoadError(f"unknown {title} hook event {shown(name, 40)} "
                                       f"({title}'s: {', '.join(events)})", path, key),
                       event=None)
            return
        if not isinstance(entries, list):
            self.error(path, LoadError(f"expected a list of {what}", path, key), event)
            return
        for index, entry in enumerate(entries):
            yield event, f"{key}[{index}]", entry

    def read(self, path: str, fmt: str) -> Any:
        """A config file's data; None when there is none, or when it does not parse (then
        that is its problem, and the other files go on)."""
        try:
            return read(path, fmt)
        except LoadError as err:
            self.error(path, err)
            return None

    def hook(self, path: str, build: Callable[..., model.EventHook], *args: Any,
             event: str | None = model.BLOCKABLE) -> None:
        """``build(*args)`` one hook, on ``event`` (BLOCKABLE: not known before it is
        built; None: a name no event has); a LoadError is that hook's problem (and a
        stand-in on ``event``), and the next one goes on."""
        try:
            hook = build(*args)
        except LoadError as err:
            self.error(path, err, event)
            return
        self.hooks.append(hook)
        for warning in hook.warnings:
            self.problems.append(Problem(path, None, warning, WARNING))

    def extend(self, other: Collected) -> None:
        self.hooks += other.hooks
        self.problems += other.problems
        self.unread += other.unread
        self.pipelines.update(other.pipelines)
