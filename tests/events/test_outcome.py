"""What firing one event came to (initd/events/outcome.py), in initd's one JSON casing."""

from __future__ import annotations

from initd.events.actions import Status
from initd.events.outcome import Outcome
from initd.events.verdict import HookResult


def test_as_json_is_camel_case_with_the_payloads_keys_as_they_are() -> None:
    result = HookResult(hook="10-a.sh", dialect="discobot", action="script",
                        command="10-a.sh", status=Status.BLOCKED, exit_code=2, stdout="",
                        stderr="no", timed_out=False, duration_ms=1.5, decision=None,
                        error=None)
    made = Outcome("pre_tool", True, "no", None, None, False, [result],
                   permission_decision="deny", continue_=False,
                   updated_input={"file_path": "/a", "old_string": "x"})
    data = made.as_json()
    assert data["permissionDecision"] == "deny" and data["continue"] is False
    assert data["updatedInput"] == {"file_path": "/a", "old_string": "x"}  # data: as is
    assert data["results"][0]["status"] == "blocked"
    assert data["results"][0]["exitCode"] == 2 and data["results"][0]["timedOut"] is False
    assert "hookSpecific" in data and data["hookSpecific"] is None
