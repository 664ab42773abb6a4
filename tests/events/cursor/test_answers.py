"""What a Cursor hook's answer means, per event (initd/events/cursor/answers.py): exit 2
blocks a guard, another exit or no JSON lets it through unless failClosed, a permission
allow | ask | deny, a follow-up, and sessionStart's env less what would change another
hook's process."""

from __future__ import annotations

import json

import pytest

from initd.events import answers as read
from initd.events.actions import ActionResult, Status
from initd.events.cursor import answers
from initd.events.verdict import Verdict
from initd.hooks import kinds
from tests.support.calls import hook

EVENT = {"beforeShellExecution": "pre_tool", "preToolUse": "pre_tool", "stop": "stop",
         "subagentStart": "pre_tool", "beforeSubmitPrompt": "user_prompt_submit",
         "sessionStart": "session_start", "afterShellExecution": "post_tool",
         "postToolUse": "post_tool", "preCompact": "pre_compact"}


def said(event: str, code: int, out: object = "", err: str = "", closed: bool = False,
         status: Status | None = None) -> Verdict:
    text = out if isinstance(out, str) else json.dumps(out)
    result = ActionResult(status or (Status.OK if code == 0 else Status.FAILED), code, text,
                          err, error="timed out" if status == Status.ERROR else None)
    made = hook(key=f"hooks.{event}[0]", dialect="cursor", event=EVENT[event],
                on_error="deny" if closed else "allow")
    return answers.answer(result, made, kinds.BY_NAME[EVENT[event]])


@pytest.mark.parametrize(("event", "code", "out", "closed", "blocks"), [
    ("beforeShellExecution", 2, "", False, True),
    ("beforeShellExecution", 1, "", False, False),  # fail-open by default
    ("beforeShellExecution", 1, "", True, True),  # failClosed
    ("beforeShellExecution", 0, "checking...", False, False),  # no JSON: a failure
    ("beforeShellExecution", 0, "checking...", True, True),
    ("beforeShellExecution", 0, {"permission": "deny"}, False, True),
    ("beforeShellExecution", 0, {"permission": "allow"}, False, False),
    ("beforeShellExecution", 0, {"hookSpecificOutput": {"permissionDecision": "deny"}},
     False, True),  # Claude Code's spelling too
    ("subagentStart", 0, {"permission": "ask"}, False, True),  # "treated as deny"
    ("preToolUse", 0, {"permission": "ask"}, False, False),
    ("afterShellExecution", 2, "", False, False),  # exit 2 blocks no after-event
    ("beforeSubmitPrompt", 0, {"continue": False}, False, True),
    ("stop", 0, {"followup_message": "go on"}, False, True),
    ("stop", 0, {"followup_message": ""}, False, False),
    ("sessionStart", 0, {"continue": False}, False, False),  # not read
])
def test_what_blocks(event: str, code: int, out: object, closed: bool, blocks: bool) -> None:
    assert said(event, code, out, closed=closed).blocks is blocks


def test_a_hook_that_could_not_run() -> None:
    assert not said("beforeShellExecution", 0, status=Status.ERROR).blocks
    assert said("beforeShellExecution", 0, closed=True, status=Status.ERROR).blocks


def test_an_unreadable_answer_is_the_hooks_error() -> None:
    with pytest.raises(read.Unreadable):
        said("beforeShellExecution", 0, '{"permission": "allow",')


def test_reasons_and_messages() -> None:
    deny = said("beforeShellExecution", 0, {"permission": "deny", "user_message": "no",
                                             "agent_message": "use trash"})
    assert (deny.reason, deny.feedback, deny.permission) == ("no", "use trash", "deny")
    assert said("beforeShellExecution", 2, "", "not this").reason == "not this"
    odd = said("preToolUse", 0, {"permission": "maybe"})
    assert odd.permission is None and "'maybe': not allow, deny or ask" in str(odd.note)
    assert said("preToolUse", 0, {"permission": "allow", "updated_input": {"command": "ls"}}
                ).updated_input == {"command": "ls"}
    assert said("sessionStart", 0, {"additional_context": "c"}).context == "c"
    assert said("preCompact", 0, {"user_message": "m"}).system_message == "m"


@pytest.mark.parametrize(("env", "kept"), [
    ({"A": "1", "PATH": "/tmp", "LD_PRELOAD": "/x.so", "BASH_ENV": "/x"}, {"A": "1"}),
    ({"CURSOR_PROJECT_DIR": "/elsewhere", "B": "2"}, {"B": "2"}),  # Cursor's own
    ({"A=B": "1", "": "x", "N": "a\0b", "I": 1}, {}),
    ("A=1", {}),
])
def test_session_env(env: object, kept: dict[str, str]) -> None:
    assert answers.session_env(env) == kept
