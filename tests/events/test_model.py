"""Event hooks' records (initd/events/model.py): which events a stand-in (a hook initd could
not load) is on."""

from __future__ import annotations

import pytest

from initd.events.model import BLOCKABLE, EVERY, StandIn


@pytest.mark.parametrize(("on", "event", "blockable", "concerns"), [
    ("pre_tool", "pre_tool", True, True),
    ("pre_tool", "stop", True, False),  # the event it names, only
    ("post_tool", "post_tool", False, True),  # an error there, blocking nothing
    (BLOCKABLE, "stop", True, True),  # not known which: every blockable one
    (BLOCKABLE, "after_turn", False, False),
    (EVERY, "after_turn", False, True),  # a hooks directory not read whole
])
def test_which_events_a_stand_in_is_on(on: str, event: str, blockable: bool,
                                       concerns: bool) -> None:
    assert StandIn("/f", "why", on).concerns(event, blockable) is concerns
