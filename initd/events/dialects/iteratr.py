"""iteratr's ``.iteratr.hooks.yml`` (its hooks spec): ``version``, then ``hooks.<event>`` lists of
``{command, timeout}`` (30 s by default) run through ``sh -c`` with ``{{iteration}}`` and
``{{session}}`` (any payload key, in fact). Its ``pre_iteration`` output becomes the
agent's context; a failure is part of that text, never a stop."""

from __future__ import annotations

from initd.config.problems import LoadError
from initd.events import sources
from initd.events.dialect import InitdRules, Where
from initd.events.loading import Collected, EventFields
from initd.events.model import EventHook, Shell

NAME = "iteratr"

DEFAULT_TIMEOUT = 30.0


def load(workspace: str) -> Collected:
    found = Collected(NAME)
    [(path, _)] = sources.paths(NAME, workspace, "")
    data = found.read(path, "yaml")
    if data is None:
        return found
    if not isinstance(data, dict):
        found.error(path, LoadError("expected a mapping with version and hooks", path))
        return found
    if data.get("version", 1) != 1:
        found.error(path, LoadError(f"expected 1, got {data['version']!r}", path, "version"))
        return found
    for event, key, entries in found.events(path, data.get("hooks") or {}, "hooks",
                                            single=True):
        for index, entry in enumerate(entries):
            found.hook(path, _hook, event.name, entry, path, f"{key}[{index}]",
                       event=event.name)
    return found


def _hook(event: str, entry: object, path: str, key: str) -> EventHook:
    if isinstance(entry, str):
        entry = {"command": entry}
    f = EventFields(entry, path, key)
    command = f.command("command")
    return EventHook(
        event=event, dialect=NAME, source=path, key=key,
        label=command, spec=Shell(command),
        timeout=f.number("timeout", DEFAULT_TIMEOUT), wait=True,
        warnings=f.unknown())


class Iteratr(InitdRules):
    name = NAME
    title = "iteratr"

    def load(self, where: Where) -> Collected:
        return load(where.workspace)

    def files(self, where: Where) -> list[str]:
        return [path for path, _ in sources.paths(NAME, where.workspace, where.home)]


DIALECT = Iteratr()
