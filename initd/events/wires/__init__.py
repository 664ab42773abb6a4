"""How each agent that calls hooks calls initd (``initd emit --from NAME``): its wire
(events/wire.py says what one is), a module here each, named in sources.AGENTS. ``emit
--from`` and ``initd shim`` import the one wire they speak, never every format's loader."""

from __future__ import annotations

from importlib import import_module

from initd.events.sources import AGENTS
from initd.events.wire import Wire


def wire(agent: str) -> Wire | None:
    """``agent``'s wire, or None for a name that is no agent's."""
    if agent not in AGENTS:
        return None
    made: Wire = import_module(f"initd.events.wires.{agent}").WIRE
    return made
