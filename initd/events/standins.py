"""Stand-ins: a guard initd could not load or run stays in the event's answer as that
guard's error, never simply not there (invariant 12). One stands in, after the hooks that
loaded, for each hook that did not (model.StandIn: a file that does not parse or cannot
be read, a matcher RE2 cannot run, a hooks directory too full to read), and one for the
hooks of an event whose payload initd could not take (too big, nested too deep). Each is
an error result with ``on_error: deny``: it blocks a blockable event."""

from __future__ import annotations

from initd.config.log import Logger
from initd.events.model import DISCOBOT, EVERY, EventHook, Script, StandIn
from initd.events.verdict import Tally
from initd.hooks.kinds import Event

NOT_LOADED = "a hook initd could not load"


def add(stand_ins: list[StandIn], event: Event, state: Tally, said: set[tuple[str, str]],
        log: Logger) -> None:
    """Those of ``stand_ins`` that may be on ``event``, as error results in ``state``.
    Each is said in the log once (``said`` keeps which)."""
    for stand_in in stand_ins:
        if not stand_in.concerns(event.name, event.blockable):
            continue
        if (stand_in.source, stand_in.reason) not in said:
            said.add((stand_in.source, stand_in.reason))
            if stand_in.event == EVERY:
                log.error("hooks directory not read whole: blockable events are blocked",
                          directory=stand_in.source, reason=stand_in.reason)
            else:
                log.error("hook not loaded: its error is in the answer of every event it "
                          "may be on, and blocks a blockable one", source=stand_in.source,
                          reason=stand_in.reason)
        state.error(_hook(stand_in, event), stand_in.reason)


def _hook(stand_in: StandIn, event: Event) -> EventHook:
    directory = stand_in.event == EVERY
    return EventHook(event=event.name, dialect=stand_in.dialect, source=stand_in.source,
                     key="(directory)" if directory else "(not loaded)",
                     label=f"the hooks in {stand_in.source}" if directory else NOT_LOADED,
                     spec=Script(stand_in.source, "unread"), timeout=0, wait=True,
                     on_error="deny")


def payload(event: Event) -> EventHook:
    """The event's hooks, none of which ran: its payload could not be taken."""
    return EventHook(event=event.name, dialect=DISCOBOT, source="(the event's payload)",
                     key="(not taken)", label=f"the hooks of {event.name}",
                     spec=Script("(payload)", "payload"), timeout=0, wait=True,
                     on_error="deny")
