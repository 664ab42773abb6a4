"""The wires' registry (initd/events/wires/__init__.py): each agent's own wire, imported
alone; None for a name that is no agent's, never a module it names."""

from __future__ import annotations

import sys

import pytest

from initd.events import wires
from initd.events.sources import AGENTS


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_each_agents_wire(agent: str) -> None:
    made = wires.wire(agent)
    assert made is not None and made.agent == agent


@pytest.mark.parametrize("name", ["", "discobot", "../claude", "wires", "__init__",
                                  "claude.x", "os", "CLAUDE"])
def test_no_wire_for_what_is_no_agent(name: str) -> None:
    assert wires.wire(name) is None
    assert f"initd.events.wires.{name}" not in sys.modules or name in AGENTS
