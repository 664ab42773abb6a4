"""Claude Code hooks, how handlers run: several matching hooks in parallel, identical
ones once, timeouts, background (`async`) hooks, and the handler types initd cannot run
(`prompt`, `agent`) or must speak (`http`); each case as Claude Code's public hooks
reference states it (claude_hooks_support.HOOKS, the revision of 2026-08-22 unless a case
says otherwise), quoted in its docstring.

No case asserts on a duration: concurrency is shown by two hooks that each wait for a file
the other one makes (with a generous deadline), and timeouts by hooks that wait for a file
the test makes, or never.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import (
    DEADLINE,
    Endpoint,
    Session,
    command,
    group,
    hooks,
    one_result,
    q,
    session_fixture,
    wait_until,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cc(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def waits_for(mine: Path, theirs: Path, saw: Path, limit: float = DEADLINE) -> str:
    """A command that makes ``mine``, then waits up to ``limit`` s for ``theirs``, and
    writes ``saw`` (yes or no)."""
    tries = int(limit * 10)
    return (f"cat >/dev/null; touch {q(mine)}; i=0; "
            f"while [ ! -e {q(theirs)} ] && [ $i -lt {tries} ]; do sleep 0.1; i=$((i+1)); done; "
            f"if [ -e {q(theirs)} ]; then echo yes; else echo no; fi > {q(saw)}")


# -- parallel, and once ------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["one matcher group", "two matcher groups",
                                    "user and project files"])
def test_matching_hooks_run_in_parallel(cc: Session, layout: str) -> None:
    """HOOKS, "Hook handler fields": "All matching hooks run in parallel." GUIDE, "Hook
    events": "When an event fires, Claude Code runs all matching hooks in parallel". (The
    old revision, "Hook Execution Details": "**Parallelization**: All matching hooks run in
    parallel".)

    Hook A makes a.started and waits for b.started; hook B makes b.started and waits for
    a.started. Run one after the other, the first would wait in vain; run together, each
    sees the other."""
    out = cc.out
    a = command(waits_for(out / "a.started", out / "b.started", out / "a.saw"))
    b = command(waits_for(out / "b.started", out / "a.started", out / "b.saw"))
    if layout == "one matcher group":
        cc.project(hooks(PreToolUse=group(a, b)))
    elif layout == "two matcher groups":
        cc.project(hooks(PreToolUse=[group(a, matcher="Bash"), group(b, matcher="*")]))
    else:
        cc.user(hooks(PreToolUse=group(a)))
        cc.project(hooks(PreToolUse=group(b)))
    cc.start()
    cc.post("PreToolUse")
    assert ((out / "a.saw").read_text(), (out / "b.saw").read_text()) == ("yes\n", "yes\n")


def test_the_same_handler_in_two_settings_files_runs_once(cc: Session) -> None:
    """HOOKS, "Hook handler fields": "If you define the same handler in more than one
    settings file, it runs once." """
    handler = command(cc.record("same"))
    cc.user(hooks(PreToolUse=group(handler)))
    cc.project(hooks(PreToolUse=group(handler)))
    cc.local(hooks(PreToolUse=group(handler, matcher="Bash")))
    cc.start()
    cc.post("PreToolUse")
    assert cc.runs("same") == 1


def test_identical_handlers_in_one_file_run_once(cc: Session) -> None:
    """HOOKS, revision of 2026-01/-03, "Hook handler fields": "All matching hooks run in
    parallel, and identical handlers are deduplicated automatically." The old revision,
    "Hook Execution Details": "**Deduplication**: Multiple identical hook commands are
    deduplicated automatically"."""
    handler = command(cc.record("same"))
    cc.project(hooks(PreToolUse=[group(handler, handler, matcher="Bash"), group(handler)]))
    cc.start()
    cc.post("PreToolUse")
    assert cc.runs("same") == 1


# -- timeouts ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_hook_past_its_timeout_is_cancelled_and_decides_nothing(cc: Session) -> None:
    """HOOKS, "Timeouts": "A `command`, `http`, or `mcp_tool` hook that reaches its
    `timeout` is canceled: Claude Code discards the hook's output, and the hook renders no
    decision. On `PreToolUse` ...: A timed-out `command`, `http`, or `mcp_tool` hook
    doesn't block the tool call." "Common fields": `timeout` "Seconds before canceling"."""
    late = cc.out / "late"
    cc.project(hooks(PreToolUse=group(command(
        f"cat >/dev/null; echo stalled > {q(cc.out / 'started')}; "
        f"i=0; while [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; "
        f"touch {q(late)}; echo 'too late' >&2; exit 2", timeout=1))))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["blocked"] is False
    assert one_result(outcome, "stalled")["timedOut"] is True


@pytest.mark.slow
def test_one_hooks_timeout_does_not_affect_the_others(cc: Session) -> None:
    """HOOKS, old revision, "Hook Execution Details": "**Timeout**: ... A timeout for an
    individual command does not affect the other commands." (Current: "All matching hooks
    run in parallel"; a timed-out hook "renders no decision".) The other hook's deny
    stands."""
    cc.project(hooks(PreToolUse=group(
        command("cat >/dev/null; echo slow >/dev/null; sleep 60", timeout=1),
        command("cat >/dev/null; echo 'denied by the fast one' >&2; exit 2"))))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["blocked"] is True
    assert "denied by the fast one" in (outcome["reason"] or "")
    assert one_result(outcome, "sleep 60")["timedOut"] is True


def released_later(cc: Session, event: str, wait: float,
                   **more: Any) -> tuple[dict[str, Any], bool]:
    """A hook on ``event`` that starts, then waits (up to 120 s) for a file the test makes
    ``wait`` seconds after the hook started; returns the outcome and whether the hook saw
    the file."""
    started, release, saw = cc.out / "started", cc.out / "release", cc.out / "saw"
    cc.project(hooks(**{event: group(command(
        f"cat >/dev/null; touch {q(started)}; i=0; "
        f"while [ ! -e {q(release)} ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; "
        f"touch {q(saw)}; echo released", **more))}))
    cc.start()
    answer: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: answer.update(cc.post(event)))
    thread.start()
    wait_until(started.exists, what="the hook to start")
    time.sleep(wait)  # an input of the case (past 60 s), never what it asserts
    release.touch()
    thread.join(200)
    assert answer, "the event did not answer"
    return answer, saw.exists()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_default_timeout_of_a_command_hook_is_600_seconds(cc: Session) -> None:
    """HOOKS, "Common fields" (current revision, since 2026-01-31): `timeout` "Seconds before
    canceling. Defaults: 600 for `command`, `http`, and `mcp_tool`; 30 for `prompt`; 60 for
    `agent`." "Run hooks in the background": "async hooks use the same 10-minute default as
    sync hooks". (The old revision: "**Timeout**: 60-second execution limit by default".)

    A PreToolUse hook still running 65 s after it started is not cancelled."""
    outcome, saw = released_later(cc, "PreToolUse", 65)
    result = one_result(outcome, "released")
    assert result["timedOut"] is False and saw, result
    assert result["exitCode"] == 0


@pytest.mark.slow
def test_the_default_timeout_on_user_prompt_submit_is_30_seconds(cc: Session) -> None:
    """HOOKS, "UserPromptSubmit": "`UserPromptSubmit` hooks have a default timeout of 30
    seconds for `command`, `http`, and `mcp_tool` types, shorter than the 600-second
    default"; "A `UserPromptSubmit` command ... hook that reaches its timeout is canceled
    and its output, including any `additionalContext`, is discarded. The prompt still
    reaches Claude without that context."

    The hook waits up to 50 s for a file nobody makes, then prints context: cancelled at
    30 s, its context never arrives."""
    cc.project(hooks(UserPromptSubmit=group(command(
        f"cat >/dev/null; i=0; while [ ! -e {q(cc.out / 'never')} ] && [ $i -lt 500 ]; "
        "do sleep 0.1; i=$((i+1)); done; echo 'context from a slow hook'"))))
    cc.start()
    outcome = cc.post("UserPromptSubmit")
    assert outcome["blocked"] is False
    assert outcome["additionalContext"] is None
    assert outcome["results"][0]["timedOut"] is True


@pytest.mark.slow
def test_session_end_hooks_have_a_budget_of_1_5_seconds(cc: Session) -> None:
    """HOOKS, "Common fields": "`SessionEnd` hooks share a 1.5-second budget; if your
    settings set a longer per-hook `timeout`, Claude Code raises the budget to match, up to
    60 seconds". "SessionEnd": "SessionEnd hooks have a default timeout of 1.5 seconds."

    A SessionEnd hook without `timeout` that waits up to 20 s for a file nobody makes is
    cancelled."""
    cc.project(hooks(SessionEnd=group(command(
        f"cat >/dev/null; i=0; while [ ! -e {q(cc.out / 'never')} ] && [ $i -lt 200 ]; "
        "do sleep 0.1; i=$((i+1)); done; echo waited"))))
    cc.start()
    outcome = cc.post("SessionEnd")
    assert one_result(outcome, "waited")["timedOut"] is True


# -- async -------------------------------------------------------------------------------------


def test_an_async_hook_runs_in_the_background_and_decides_nothing(cc: Session) -> None:
    """HOOKS, "Run hooks in the background": "set "async": true to run the hook in the
    background while Claude continues working. Async hooks can't block or control Claude's
    behavior: response fields like `decision`, `permissionDecision`, and `continue` have no
    effect"; "When an async hook fires, Claude Code starts the hook process and immediately
    continues without waiting for it to finish."

    The hook waits for a file the test makes only once the event has answered, then
    denies: the event answered first, and nothing was blocked."""
    release, saw = cc.out / "release", cc.out / "saw"
    cc.project(hooks(PreToolUse=group(command(
        f"cat >/dev/null; i=0; while [ ! -e {q(release)} ] && [ $i -lt 300 ]; do sleep 0.1; "
        f"i=$((i+1)); done; if [ -e {q(release)} ]; then echo yes; else echo no; fi > {q(saw)}; "
        "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", "
        "\"permissionDecision\": \"deny\"}}'; exit 2", **{"async": True}))))
    cc.start()
    outcome = cc.post("PreToolUse")
    release.touch()
    wait_until(saw.exists, what="the background hook to finish")
    assert saw.read_text() == "yes\n", "the event waited for the async hook"
    assert outcome["blocked"] is False
    assert outcome["permissionDecision"] is None


# -- handler types initd cannot run: refused, and an error on their event ----------------------


@pytest.mark.parametrize("kind", ["prompt", "agent"])
def test_a_prompt_or_agent_hook_is_refused_with_one_line(cc: Session, kind: str) -> None:
    """HOOKS, "Hook handler fields": "**Prompt hooks** (`type: "prompt"`): send a prompt to
    a Claude model for single-turn evaluation"; "**Agent hooks** (`type: "agent"`): spawn a
    subagent". initd has no model to ask, so (its decision, docs/claude-code.md) such a
    hook is refused when its file is loaded, said once in the service's log, naming the
    file and the hook's type: the gate the user wrote will not gate."""
    settings = cc.project(hooks(PreToolUse=group({"type": kind, "prompt": "Is this safe? "
                                                  "$ARGUMENTS"}, matcher="Bash")))
    cc.start()
    for _ in range(3):
        cc.post("PreToolUse")
    lines = [line for line in cc.log_lines() if str(settings) in line and kind in line]
    assert len(lines) == 1, lines


@pytest.mark.parametrize("kind", ["prompt", "agent"])
def test_a_prompt_or_agent_hook_is_an_error_on_its_event_and_the_guard_does_not_pass(
        cc: Session, kind: str) -> None:
    """HOOKS, "Prompt-based hooks": "`PreToolUse`: the tool call is denied" on `ok: false`;
    prompt and agent hooks are guards ("use an LLM to evaluate whether to allow or block an
    action"). initd cannot ask the model: the hook is an error result on its event, never
    silently skipped, and (docs/events.md, "A guard never passes because of initd") the tool call
    it guards is not let through."""
    cc.project(hooks(PreToolUse=group({"type": kind, "prompt": "Is this safe? $ARGUMENTS"},
                                      matcher="Bash")))
    cc.start()
    outcome = cc.post("PreToolUse")
    errors = [result for result in outcome["results"] if result["error"]]
    assert len(errors) == 1 and kind in errors[0]["error"], outcome["results"]
    assert outcome["blocked"] is True


def test_a_prompt_hook_on_stop_is_an_error_not_a_silent_skip(cc: Session) -> None:
    """HOOKS, "Prompt hook configuration": the reference's own example is a `Stop` prompt
    hook ("asks the LLM to evaluate whether all tasks are complete before allowing Claude to
    finish"). Run by initd, it is an error result on `Stop`, never nothing."""
    cc.project(hooks(Stop=group({"type": "prompt", "prompt": "Evaluate if Claude should "
                                 "stop: $ARGUMENTS. Check if all tasks are complete."})))
    cc.start()
    outcome = cc.post("Stop")
    assert any(result["error"] and "prompt" in result["error"]
               for result in outcome["results"]), outcome["results"]


# -- http hooks --------------------------------------------------------------------------------


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    yield server
    server.close()


def http_hook(url: str, **more: Any) -> dict[str, Any]:
    return {"type": "http", "url": url, **more}


def test_an_http_hook_gets_the_event_json_as_a_post_body(cc: Session,
                                                         endpoint: Endpoint) -> None:
    """HOOKS, "HTTP hook fields": "Claude Code sends the hook's JSON input as the POST
    request body with `Content-Type: application/json`." "Hook lifecycle": "For HTTP hooks,
    it arrives as the POST request body." """
    cc.project(hooks(PreToolUse=group(http_hook(endpoint.url), matcher="Bash")))
    cc.start()
    cc.post("PreToolUse")
    assert len(endpoint.requests) == 1
    request = endpoint.requests[0]
    assert request["path"] == "/hooks/event"
    assert request["headers"].get("content-type", "").startswith("application/json")
    body = json.loads(request["body"])
    assert body["hook_event_name"] == "PreToolUse" and body["tool_name"] == "Bash"
    assert body["tool_input"] == {"command": "npm test"} and "session_id" in body


@pytest.mark.parametrize("status, body, blocked, decision", [
    # "2xx with a JSON object body: parsed using the same JSON output schema as command
    # hooks"
    pytest.param(200, json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                             "permissionDecision": "deny",
                                             "permissionDecisionReason": "http says no"}}),
     True, "deny", id="200-json-deny"),
    # "2xx with an empty body: success, equivalent to exit code 0 with no output"
    pytest.param(200, "", False, None, id="200-empty"),
    # "Non-2xx status: non-blocking error, execution continues"; "Unlike command hooks,
    # HTTP hooks can't signal a blocking error through status codes alone."
    pytest.param(500, "", False, None, id="500"),
    pytest.param(403, "denied", False, None, id="403-text"),
])
def test_an_http_hooks_answer(cc: Session, endpoint: Endpoint, status: int, body: str,
                              blocked: bool, decision: str | None) -> None:
    """HOOKS, "HTTP response handling": "HTTP hooks use HTTP status codes and response
    bodies instead of exit codes and stdout" (the rows are quoted beside each case); "To
    block a tool call or deny a permission, return a 2xx response with a JSON body
    containing the appropriate decision fields." """
    endpoint.status, endpoint.body = status, body
    cc.project(hooks(PreToolUse=group(http_hook(endpoint.url), matcher="Bash")))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert len(endpoint.requests) == 1
    assert outcome["blocked"] is blocked, outcome["results"]
    assert outcome["permissionDecision"] == decision
    if blocked:
        assert outcome["reason"] == "http says no"


def test_an_http_hook_that_cannot_connect_is_a_non_blocking_error(cc: Session) -> None:
    """HOOKS, "HTTP response handling": "**Connection failure**: non-blocking error,
    execution continues". (A port that was free a moment ago, on loopback.)"""
    closed = Endpoint()
    url = closed.url
    closed.close()
    cc.project(hooks(PreToolUse=group(http_hook(url), matcher="Bash")))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert outcome["blocked"] is False
    assert any(result["error"] or result["status"] in ("failed", "error")
               for result in outcome["results"]), outcome["results"]


def test_an_http_hooks_headers_interpolate_only_the_allowed_variables(
        cc: Session, endpoint: Endpoint) -> None:
    """HOOKS, "HTTP hook fields": `headers` "Values support environment variable
    interpolation using `$VAR_NAME` or `${VAR_NAME}` syntax. Only variables listed in
    `allowedEnvVars` are resolved"; `allowedEnvVars` "References to unlisted variables are
    replaced with empty strings." """
    cc.env.update({"HOOK_TOKEN": "t0k3n", "HOOK_SECRET": "do-not-send"})
    cc.project(hooks(PreToolUse=group(http_hook(
        endpoint.url, headers={"Authorization": "Bearer $HOOK_TOKEN",
                               "X-Other": "[${HOOK_SECRET}]"},
        allowedEnvVars=["HOOK_TOKEN"]), matcher="Bash")))
    cc.start()
    cc.post("PreToolUse")
    assert len(endpoint.requests) == 1
    headers = endpoint.requests[0]["headers"]
    assert headers.get("authorization") == "Bearer t0k3n"
    assert headers.get("x-other") == "[]"
    assert "do-not-send" not in json.dumps(headers)
    assert os.environ.get("HOOK_SECRET") is None  # the test's own environment is untouched


@pytest.mark.parametrize("body", ['{"hookSpecificOutput": {"permissionDecision": "deny"',
                                  "all good, go ahead"], ids=["cut-off-json", "plain-text"])
def test_an_http_answer_initd_cannot_read_is_the_hooks_error_and_a_guard_does_not_pass(
        cc: Session, endpoint: Endpoint, body: str) -> None:
    """HOOKS, "HTTP response handling": "2xx with a JSON object body: parsed using the same
    JSON output schema as command hooks"; "To block a tool call or deny a permission,
    return a 2xx response with a JSON body containing the appropriate decision fields."
    initd's contract (ARCHITECTURE.md invariant 12, docs/events.md, "A guard never passes
    because of initd"): a 2xx answer initd cannot read as that object is the hook's
    error, and the tool call it guards is not let through."""
    endpoint.body = body
    cc.project(hooks(PreToolUse=group(http_hook(endpoint.url), matcher="Bash")))
    cc.start()
    outcome = cc.post("PreToolUse")
    assert len(endpoint.requests) == 1
    result = outcome["results"][0]
    assert result["error"] and result["status"] != "ok", result
    assert outcome["blocked"] is True
