"""What a Claude Code hook's answer means, per event (initd/events/claude/answers.py), as
the hooks reference gives it: exit 0, exit 2 and any other exit, JSON's decisions, the
events that cannot block, and a hook that could not run (invariant 12: blocks only when
its on_error says deny, or initd failed)."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from initd.events import answers as read
from initd.events.actions import ActionResult, Status
from initd.events.claude import answers
from initd.hooks import kinds


def said(event: str, code: int, out: object = "", err: str = "",
         deny_on_error: bool = False) -> answers.Answer:
    text = out if isinstance(out, str) else json.dumps(out)
    result = ActionResult(Status.OK if code == 0 else Status.FAILED, code, text, err)
    return answers.answer(result, "guard.sh", kinds.BY_NAME[event], deny_on_error)


@pytest.mark.parametrize(("event", "code", "out", "err", "blocks"), [
    ("pre_tool", 2, "", "no rm", True), ("stop", 2, "", "not done", True),
    ("pre_tool", 1, "", "crashed", False),  # another exit: a non-blocking error
    ("pre_tool", 0, "", "", False), ("post_tool", 2, "", "look", False),  # feedback
    ("session_start", 2, "", "x", False),  # cannot block: for the user only
    ("permission_request", 2, "", "no", False),  # "Exit code 2 isn't honored"
    ("pre_tool", 0, {"hookSpecificOutput": {"permissionDecision": "deny"}}, "", True),
    ("pre_tool", 0, {"decision": "block"}, "", True),  # the deprecated form: a deny
    ("pre_tool", 1, {"hookSpecificOutput": {"permissionDecision": "deny"}}, "", True),
    ("stop", 0, {"decision": "block", "reason": "go on"}, "", True),
    ("post_tool", 0, {"decision": "block", "reason": "x"}, "", False),
    ("session_end", 0, {"decision": "block"}, "", False),
    ("elicitation", 0, {"hookSpecificOutput": {"action": "decline"}}, "", True),
    ("permission_request", 0, {"hookSpecificOutput": {"decision": {"behavior": "deny"}}},
     "", True),
    ("permission_request", 2, {"hookSpecificOutput": {"decision": {"behavior": "deny"}}},
     "", True),  # its decision object decides, whatever the exit
    ("worktree_create", 1, "", "", True), ("worktree_create", 0, "", "", True),  # no path
    ("worktree_create", 0, "/w/tree\n", "", False),
    ("stop_failure", 2, {"decision": "block"}, "x", False),  # all ignored
])
def test_what_blocks(event: str, code: int, out: object, err: str, blocks: bool) -> None:
    assert said(event, code, out, err).blocks is blocks


def test_exit_2s_reason_is_stderr_unless_its_json_blocks_with_one() -> None:
    assert said("stop", 2, "", "tests fail\n").reason == "tests fail"
    assert said("stop", 2, {"decision": "block", "reason": "own"}, "err").reason == "own"
    assert said("pre_tool", 2, {"hookSpecificOutput": {
        "permissionDecision": "deny", "permissionDecisionReason": "why"}}).reason == "why"
    assert said("stop", 2).reason == "guard.sh exited 2 and said nothing on stderr"
    assert said("pre_tool", 2, "", "no").permission == "deny"
    assert said("post_tool", 2, "", "see this").feedback == "see this"


def test_plain_stdout_is_context_only_where_the_reference_says() -> None:
    assert said("session_start", 0, "branch main\n").context == "branch main"
    assert said("user_prompt_submit", 0, "ctx").context == "ctx"
    assert said("pre_tool", 0, "ctx").context is None


def test_continue_false_stops_and_wins_except_where_it_is_discarded() -> None:
    stop = said("pre_tool", 0, {"continue": False, "stopReason": "halt"})
    assert (stop.continue_, stop.stop_reason) == (False, "halt")
    discarded = said("session_end", 0, {"continue": False, "stopReason": "halt"})
    assert discarded.continue_ is None and discarded.stop_reason is None
    assert discarded.note == "continue: false is not read on this event"


def test_pre_tools_permission_decisions() -> None:
    allow = said("pre_tool", 0, {"hookSpecificOutput": {
        "permissionDecision": "allow", "updatedInput": {"command": "ls"}}})
    assert (allow.blocks, allow.permission, allow.decision, allow.updated_input) == (
        False, "allow", "approve", {"command": "ls"})
    odd = said("pre_tool", 0, {"hookSpecificOutput": {"permissionDecision": "maybe"}})
    assert odd.permission is None and "'maybe': not allow, ask, defer or deny" in str(odd.note)
    assert said("pre_tool", 0, {"decision": "approve"}).permission == "allow"
    ask = said("pre_tool", 0, {"hookSpecificOutput": {"permissionDecision": "ask"}})
    assert ask.permission == "ask" and not ask.blocks
    bad_input = said("pre_tool", 0, {"hookSpecificOutput": {
        "permissionDecision": "allow", "updatedInput": "ls"}})
    assert bad_input.updated_input is None


def test_a_hook_that_could_not_run() -> None:
    event = kinds.BY_NAME["pre_tool"]
    timed_out = ActionResult(Status.ERROR, error="timed out after 30s")
    mine = answers.answer(timed_out, "g", event, False)
    assert not mine.blocks and mine.reason == "g: timed out after 30s"
    denies = answers.answer(timed_out, "g", event, True)
    assert denies.blocks and denies.permission == "deny"
    initds = answers.answer(timed_out._replace(fails_closed=True), "g", event, False)
    assert initds.blocks  # initd's own failure: closed whatever on_error says
    quiet = answers.answer(timed_out, "g", kinds.BY_NAME["session_end"], True)
    assert not quiet.blocks  # nothing to block on an advisory event
    assert not answers.answer(ActionResult(Status.STARTED), "g", event, True).blocks


def test_an_unreadable_answer_is_the_hooks_error_never_a_pass() -> None:
    with pytest.raises(read.Unreadable):
        said("pre_tool", 0, "{not json")


def test_worktree_create_reads_its_path() -> None:
    assert said("worktree_create", 0, "made\n/w/t\n").relayed == {"worktreePath": "/w/t"}
    assert said("worktree_create", 0, {"hookSpecificOutput": {"worktreePath": "/w/h"}}
                ).relayed == {"worktreePath": "/w/h"}
    assert said("worktree_create", 3, "", "").reason == "guard.sh exited 3"


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) |
                    st.dictionaries(st.sampled_from([
                        "decision", "reason", "continue", "stopReason", "hookSpecificOutput",
                        "permissionDecision", "updatedInput", "behavior", "action",
                        "systemMessage", "additionalContext", "x"]), inner, max_size=4),
                    max_leaves=12)


@given(st.sampled_from(sorted(kinds.BY_NAME)), st.sampled_from([0, 1, 2]),
       st.dictionaries(st.sampled_from(["decision", "reason", "continue",
                                        "hookSpecificOutput", "suppressOutput"]), JSON,
                       max_size=4))
@example("pre_tool", 0, {"decision": []})  # once a TypeError: {"decision": []} in a dict
@settings(derandomize=True)  # (the same answers every run; 5,000 more found nothing)
def test_any_answer_is_an_answer(event: str, code: int, data: dict[str, object]) -> None:
    """Whatever a hook prints as JSON, an Answer: never an exception (a guard's verdict
    lost to a TypeError: the request a 500), and a block only with a reason."""
    got = said(event, code, data)
    assert not got.blocks or got.reason
