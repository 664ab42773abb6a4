"""Ready or not, from the supervisor's state (initd/state/ready.py): the same answer in
root's health endpoint and the hook service's /v1/ready."""

from __future__ import annotations

import pytest

from initd.state.ready import readiness


@pytest.mark.parametrize(("state", "answer"), [
    ({}, (False, "the agent has not been started yet")),
    ({"initd": {"phase": "running"}, "agent": None},
     (False, "the agent has not been started yet")),
    ({"agent": {"ready": False, "state": "starting"}}, (False, "the agent is starting")),
    ({"agent": {"ready": False, "state": "starting", "readyBy": "http://127.0.0.1:8/h"}},
     (False, "the agent is starting (ready once http://127.0.0.1:8/h answers)")),
    ({"agent": {"ready": True, "state": "running"}}, (True, "the agent is ready")),
    ({"initd": {"phase": "stopping"}, "agent": {"ready": True}},
     (False, "initd is stopping")),  # never ready while it stops
    ({"initd": None, "agent": {"ready": True}}, (True, "the agent is ready")),
])
def test_readiness(state: dict[str, object], answer: tuple[bool, str]) -> None:
    assert readiness(state) == answer
