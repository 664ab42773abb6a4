"""nyzhi's ``[[agent.hooks]]`` (its hooks docs) from ``~/.config/nyzhi/config.toml``, then the
workspace's ``.nyzhi/config.toml`` and ``.nyzhi/config.local.toml``, in that order:
``event``, ``command`` (``sh -c``, ``{file}``), ``pattern`` (``*.ext`` list, a path
substring, or a glob), ``timeout`` (30 s), ``block``, ``tool_name`` (comma list)."""

from __future__ import annotations

from initd.config.problems import LoadError
from initd.events import sources
from initd.events.dialect import InitdRules, Where
from initd.events.loading import Collected, EventFields, event_of, named
from initd.events.model import EventHook, Shell

NAME = "nyzhi"

DEFAULT_TIMEOUT = 30.0
# nyzhi's "special exit codes": exit 2 is a rejection with feedback for team hooks
# only. Anywhere else only `block = true` blocks, so a pre_tool check running `make`
# (which exits 2 on any error) does not start blocking tools.
EXIT2_EVENTS = ("teammate_idle", "task_completed")


def files(workspace: str, home: str) -> list[tuple[str, bool]]:
    """(path, defined by the workspace) in the order they load."""
    return sources.owned(NAME, workspace, home)


def load(workspace: str, home: str) -> Collected:
    found = Collected(NAME)
    for path, in_workspace in files(workspace, home):
        data = found.read(path, "toml")
        if data is None:
            continue
        hooks = (data.get("agent") or {}).get("hooks") if isinstance(data, dict) else None
        if hooks is None:
            continue
        if not isinstance(hooks, list):
            found.error(path, LoadError("expected [[agent.hooks]] tables", path,
                                        "agent.hooks"))
            continue
        for index, entry in enumerate(hooks):
            found.hook(path, _hook, entry, path, f"agent.hooks[{index}]", in_workspace,
                       event=named(entry.get("event") if isinstance(entry, dict) else None))
    return found


def _hook(entry: object, path: str, key: str, in_workspace: bool) -> EventHook:
    f = EventFields(entry, path, key)
    event = event_of(f.get("event"), path, f"{key}.event")
    kind = f.text("type", "command")
    if kind != "command":
        raise f.error("type", f"only 'command' hooks run (nyzhi reserves {kind!r}), got "
                      f"{kind!r}")
    command = f.command("command")
    block = f.flag("block", False)
    if block and not event.blockable:
        raise f.error("block", f"{event.name} cannot be blocked (only "
                      "pre_tool, teammate_idle, task_completed and the Pre*/Stop events can)")
    return EventHook(
        event=event.name, dialect=NAME, source=path, key=key,
        label=command, spec=Shell(command),
        timeout=f.number("timeout", DEFAULT_TIMEOUT), wait=True, block=block,
        exit2_blocks=event.name in EXIT2_EVENTS,
        on_error=f.choice("on_error", ("allow", "deny"), "allow"),
        tool_name=f.names("tool_name"), pattern=f.names("pattern"),
        workspace=in_workspace, warnings=f.unknown())


class Nyzhi(InitdRules):
    name = NAME
    title = "nyzhi"

    def load(self, where: Where) -> Collected:
        return load(where.workspace, where.home)

    def files(self, where: Where) -> list[str]:
        return [path for path, _ in files(where.workspace, where.home)]


DIALECT = Nyzhi()
