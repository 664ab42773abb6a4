"""Actions for real: webhooks to a real HTTP server and a real callback, spawned child
pipelines, commits and pushes in real repositories, and injection canaries through every
template form and every variable."""

from __future__ import annotations

import http.server
import json
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.events.support import Workspace
from tests.hooks.support import git, git_ok
from tests.support.harness import wait_for


class Receiver:
    """A real HTTP server that records every request, and answers as told."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.statuses: list[int] = []  # answered in turn; then 200
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                receiver.requests.append({"method": self.command, "path": self.path,
                                          "headers": dict(self.headers),
                                          "body": self.rfile.read(length)})
                code = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(code)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_GET = do_POST = do_PUT = _any

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # socketserver selects, then accepts with a blocking accept(): a connection gone
        # from the queue in between (a client that gave up) left serve_forever stuck in
        # accept() and the fixture's shutdown() waiting for it for good (a CI run's
        # timeout). With a timeout, that accept gives up and the loop goes on.
        self.server.socket.settimeout(1.0)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.server.shutdown()


def webhook(url: str, **more: object) -> dict[str, object]:
    return {"type": "webhook", "url": url, "await": False, **more}


# --- webhooks


def test_a_webhook_sends_its_body_with_variables_json_escaped(ws: Workspace,
                                                               receiver: Receiver) -> None:
    ws.pipeline({"on_error": [webhook(
        f"{receiver.url}/hook/${{SESSION}}", method="PUT",
        headers={"X-Session": "${SESSION}", "Authorization": "Bearer ${MY_TOKEN}"},
        body={"text": "Pipeline ${SESSION} failed: ${ERROR}", "n": 3})]})
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MY_TOKEN", "tok")  # from the environment, as ${SLACK_WEBHOOK} would be
        outcome = ws.fire("on_error", {"error": 'broke "badly" } \\ $(touch CANARY)'})
    wait_for(lambda: receiver.requests, what="the webhook")
    [request] = receiver.requests
    assert request["method"] == "PUT" and request["path"] == f"/hook/{ws.sid}"
    assert request["headers"]["X-Session"] == ws.sid
    assert request["headers"]["Authorization"] == "Bearer tok"
    assert json.loads(request["body"]) == {
        "text": f'Pipeline {ws.sid} failed: broke "badly" }} \\ $(touch CANARY)', "n": 3}
    assert outcome["results"][0]["status"] == "started"
    assert not list(ws.path.rglob("CANARY"))


def test_plain_http_to_another_host_is_refused(ws: Workspace) -> None:
    """Refused before the callback takes its port: with that port taken (as another
    initd, or a second suite, may hold the default 8765), the error is still the URL's."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        ws.pipeline({"on_error": [webhook("http://example.com/hook", **{"await": True},
                                          callback_port=taken.getsockname()[1])]})
        [result] = ws.fire("on_error")["results"]
    assert result["status"] == "error"
    assert "plain http:// only for localhost; use https://" in result["error"]
    assert "example.com" in result["error"] and "/hook" not in result["error"]  # no path


def test_a_later_placeholder_cannot_change_where_a_url_goes(ws: Workspace,
                                                           receiver: Receiver) -> None:
    ws.pipeline({"on_error": [webhook(f"{receiver.url}/report/${{ERROR}}")]})
    ws.fire("on_error", {"error": "../admin?x=1#@evil.example"})
    wait_for(lambda: receiver.requests, what="the webhook")
    assert receiver.requests[0]["path"] == "/report/..%2Fadmin%3Fx%3D1%23%40evil.example"


@pytest.mark.slow
def test_on_failure_retry_and_retries_send_retries_plus_one_requests(
        ws: Workspace, receiver: Receiver) -> None:
    """One retry policy: `on_failure: retry, retries: 2` once sent 9 requests (the
    engine's loop around the webhook's own). A webhook's retries are its sends."""
    receiver.statuses = [500] * 20
    ws.pipeline({"on_error": [webhook(receiver.url, on_failure="retry", retries=2,
                                      retry_delay=0, **{"await": True}, callback_port=0,
                                      timeout=0.3)]})
    [result] = ws.fire("on_error")["results"]
    assert result["status"] == "error" and "after 3 attempt(s)" in result["error"]
    assert len(receiver.requests) == 3


def awaited(url: str, **more: object) -> dict[str, object]:
    """Awaited: the result is there when fire returns (its callback never comes)."""
    return webhook(url, callback_port=0, timeout=0.3, on_timeout="continue",
                   **{"await": True, **more})


@pytest.mark.slow
def test_send_failures_are_retried_then_an_error(ws: Workspace, receiver: Receiver) -> None:
    receiver.statuses = [503, 502]
    ws.pipeline({"on_error": [awaited(receiver.url, retries=3, retry_delay=0)]})
    [result] = ws.fire("on_error")["results"]
    assert len(receiver.requests) == 3  # delivered at the third attempt (then no callback)
    assert "no callback within 0.3s" in result["error"]
    ws.pipeline({"on_error": [awaited("http://127.0.0.1:9/nothing", retries=2,
                                      retry_delay=0)]})
    [result] = ws.fire("on_error")["results"]
    assert result["status"] == "error" and "after 3 attempt(s)" in result["error"]
    receiver.statuses = [404]
    ws.pipeline({"on_error": [awaited(receiver.url)]})
    [result] = ws.fire("on_error")["results"]  # a 4xx is an answer: not retried
    assert result["status"] == "failed" and "answered HTTP 404" in result["error"]


@pytest.mark.slow
def test_an_awaited_webhook_waits_for_its_callback_and_passes_on_the_answer(
        ws: Workspace, receiver: Receiver) -> None:
    ws.pipeline({"on_stage_complete": [
        webhook(receiver.url, body={"text": "Plan ready", "approve":
                                    "${CALLBACK_URL}?action=approve"},
                callback_port=0, timeout=30, **{"await": True}),
        {"type": "shell", "command": 'echo "answer=$HOOK_RESPONSE"', "await": True}]})
    answered: dict[str, Any] = {}

    def approve() -> None:  # a person clicks "Approve" once the message arrives
        wait_for(lambda: receiver.requests, what="the webhook")
        url = json.loads(receiver.requests[0]["body"])["approve"]
        answered["first"] = urllib.request.urlopen(url, data=json.dumps(
            {"message": "looks good"}).encode()).status

    clicker = threading.Thread(target=approve)
    clicker.start()
    outcome = ws.fire("on_stage_complete", {"stage": "plan"})
    clicker.join(10)
    assert answered["first"] == 200
    assert [r["status"] for r in outcome["results"]] == ["ok", "ok"]
    assert json.loads(outcome["results"][1]["stdout"].removeprefix("answer=")) == {
        "message": "looks good", "action": "approve"}
    callback = json.loads(receiver.requests[0]["body"])["approve"]
    assert callback.startswith("http://127.0.0.1:") and "/callback/" in callback


@pytest.mark.slow
def test_replayed_and_wrong_tokens_get_403(ws: Workspace, receiver: Receiver) -> None:
    from initd.events.actions.webhook import Callback

    callback = Callback(0)
    try:
        wrong = callback.url[: -4] + "xxxx"
        for url in (wrong, callback.url + "extra", callback.url.rsplit("/", 1)[0] + "/"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(url)
            assert refused.value.code == 403
        assert urllib.request.urlopen(callback.url + "?action=ok").status == 200
        with pytest.raises(urllib.error.HTTPError) as replayed:
            urllib.request.urlopen(callback.url + "?action=again")
        assert replayed.value.code == 403
        assert callback.answer == {"action": "ok"}
    finally:
        callback.close()


@pytest.mark.slow
@pytest.mark.parametrize(("on_timeout", "aborted"), [("abort", True), ("continue", False)])
def test_no_callback_in_time(ws: Workspace, receiver: Receiver, on_timeout: str,
                             aborted: bool) -> None:
    ws.pipeline({"on_stage_complete": [
        webhook(receiver.url, callback_port=0, timeout=0.5, on_timeout=on_timeout,
                **{"await": True}),
        {"type": "shell", "command": "echo next", "await": True}]})
    outcome = ws.fire("on_stage_complete")
    assert outcome["aborted"] is aborted
    assert outcome["results"][0]["timedOut"]
    assert "no callback within 0.5s" in outcome["results"][0]["error"]
    assert len(outcome["results"]) == (1 if aborted else 2)


# --- spawn


def test_spawn_a_child_pipeline_with_inputs_and_its_output(ws: Workspace) -> None:
    ws.pipeline({"on_iteration_complete": [
        {"type": "spawn", "pipeline": "code-review", "await": True,
         "inputs": {"files": "${CHANGED_FILES}", "parent": "${SESSION}"},
         "when": "${ITERATION} % 10 == 0"},
        {"type": "shell", "command": 'echo "review=$SPAWN_OUTPUT"', "await": True}]},
        pipelines={"code-review": {"command":
                                   'cp "$INPUTS" "$CHILD_DIR/seen.json"; pwd > where; '
                                   'echo "{\\"approved\\": true}" > "$OUTPUT"; '
                                   'echo "reviewed" >> "$PROGRESS"; '
                                   'echo "${ITERATION-no parent variables}"'}})
    parents = ws.write("progress-parent.md", "the parent's\n")
    outcome = ws.fire("on_iteration_complete", {"iteration": 10, "progress": str(parents),
                                                "changed_files": ["a.py", "b.py"]})
    spawned, after = outcome["results"]
    assert spawned["status"] == "ok" and spawned["stdout"] == "no parent variables\n"
    assert after["stdout"] == 'review={"approved": true}\n'
    child = Path(ws.engine.ctx.state_dir) / "children" / "post_iteration-10"  # type: ignore[union-attr]
    assert json.loads((child / "seen.json").read_text()) == {"files": "a.py b.py",
                                                              "parent": ws.sid}
    assert (ws.path / "where").read_text().strip() == str(ws.path)  # from the workspace
    # its own progress file (agent-pipelines' hook spec), the parent's untouched
    assert (child / "progress.md").read_text() == "reviewed\n"
    assert parents.read_text() == "the parent's\n"
    ws.fire("on_iteration_complete", {"iteration": 10})
    assert (child.parent / "post_iteration-10-2").is_dir()  # a second child, its own dir
    assert ws.fire("on_iteration_complete", {"iteration": 3})["results"][0][
        "command"] == 'echo "review=$SPAWN_OUTPUT"'  # when: false skipped the spawn


# --- git-commit and git-push (AutoAgent's built-ins)


def test_git_commit_and_push_without_a_shell(ws: Workspace, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git_ok(tmp_path, "init", "-q", "--bare", str(remote))
    git_ok(ws.path, "remote", "add", "origin", str(remote))
    ws.write(".autoagent/config.json", json.dumps({"hooks": {"PostExecutionEnd": [
        {"type": "git-commit", "message": "Complete issue #{{issueNumber}}: {{issueTitle}}"},
        {"type": "git-push", "remote": "origin", "branch": "current"}]}}))
    ws.write("feature.txt", "done\n")
    title = "Auth; $(touch CANARY) `touch C2` 'quoted' \"twice\""
    outcome = ws.fire("PostExecutionEnd", {"issueNumber": 7, "issueTitle": title,
                                           "success": True})
    assert [r["status"] for r in outcome["results"]] == ["ok", "ok"], outcome
    log = git(ws.path, "log", "-1", "--format=%s").stdout.strip()
    assert log == f"Complete issue #7: {title}"
    branch = git(ws.path, "symbolic-ref", "--short", "HEAD").stdout.strip()
    pushed = subprocess.run(["git", "--git-dir", str(remote), "log", "-1", "--format=%s",
                             branch], capture_output=True, text=True).stdout.strip()
    assert pushed == log
    assert not list(ws.path.rglob("CANARY")) and not list(ws.path.rglob("C2"))
    outcome = ws.fire("PostExecutionEnd", {"issueNumber": 8, "issueTitle": "again"})
    assert outcome["results"][0]["stdout"] == "nothing to commit\n"


def test_no_verify_skips_the_repositorys_hooks(ws: Workspace) -> None:
    hook = ws.path / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho rejected >&2\nexit 1\n")
    hook.chmod(0o755)
    ws.write("f.txt", "x\n")
    ws.write(".autoagent/config.json", json.dumps({"hooks": {"PostExecutionEnd": [
        {"type": "git-commit", "message": "m"}]}}))
    [result] = ws.fire("PostExecutionEnd")["results"]
    assert result["status"] == "failed" and "rejected" in result["stderr"]
    ws.write(".autoagent/config.json", json.dumps({"hooks": {"PostExecutionEnd": [
        {"type": "git-commit", "message": "m", "noVerify": True}]}}))
    assert ws.fire("PostExecutionEnd")["results"][0]["status"] == "ok"


# --- injection canaries: every template form, every variable, every dialect

HOSTILE = ["$(touch CANARY)", "`touch CANARY`", "x; touch CANARY", "x && touch CANARY",
           "' ; touch CANARY ; '", '" ; touch CANARY ; "', "x\ntouch CANARY", "$HOME",
           "*", "x | touch CANARY"]


@pytest.mark.parametrize("value", HOSTILE)
def test_no_value_runs_anything_whatever_the_dialect(ws: Workspace, value: str) -> None:
    ws.write(".iteratr.hooks.yml", json.dumps({"hooks": {"pre_iteration": [
        {"command": "printf '%s|' {{task}} '{{task}}' \"{{task}}\" >> seen"}]}}))
    ws.nyzhi({"event": "pre_iteration", "command": "printf '%s|' {file} '{file}' >> seen"})
    ws.write(".autoagent/config.json", json.dumps({"hooks": {"pre_iteration": [
        {"command": "printf '%s|' {{task}} \"$(printf %s {{task}})\" >> seen"}]}}))
    ws.pipeline({"on_iteration_start": [
        {"type": "shell", "command": "printf '%s|' ${TASK} \"${TASK}\" >> seen; "
                                     "printf '%s|' \"$TASK\" >> seen", "await": True}]})
    outcome = ws.fire("pre_iteration", {"task": value, "file": value})
    assert all(r["status"] == "ok" for r in outcome["results"]), outcome
    assert not list(ws.path.rglob("CANARY")) and not list(Path("/").glob("CANARY"))
    seen = (ws.path / "seen").read_text()
    assert seen == f"{value}|" * 10


def test_an_autoagent_hook_reads_the_common_fields_on_stdin(ws: Workspace) -> None:
    """AutoAgent's hooks read eventName, sessionId, workspace and timestamp from stdin
    (AutoAgent's hooks design, "Input (via stdin)"): its own check-incomplete-todos.sh read null."""
    out = ws.path / "stdin.json"
    ws.write(".autoagent/config.json", json.dumps({"hooks": {"PreExecutionStart": [
        {"type": "command", "command": f"cat > {out}"}]}}))
    ws.fire("PreExecutionStart", {"issueNumber": 7, "sessionId": "forged"})
    got = json.loads(out.read_text())
    assert got["eventName"] == "PreExecutionStart"
    assert got["sessionId"] == ws.sid and got["workspace"] == str(ws.path)
    assert got["timestamp"].endswith("Z") and got["issueNumber"] == 7


def test_agent_pipelines_secrets_env_fills_a_webhook_url(ws: Workspace,
                                                         receiver: Receiver) -> None:
    """agent-pipelines' hook spec: webhook URLs live in
    ~/.config/agent-pipelines/secrets.env (or the environment, which wins). It was never
    read: the URL stayed ${…} and was refused."""
    import os

    secrets = Path(os.environ["HOME"], ".config", "agent-pipelines", "secrets.env")
    secrets.parent.mkdir(parents=True, exist_ok=True)
    secrets.write_text(f"INITD_TEST_HOOK_URL={receiver.url}/from-secrets\n"
                       "INITD_TEST_SHADOWED=from-file\n")
    try:
        with pytest.MonkeyPatch.context() as env:
            env.setenv("INITD_TEST_SHADOWED", "from-env")
            ws.pipeline({"on_error": [webhook("${INITD_TEST_HOOK_URL}",
                                              body={"v": "${INITD_TEST_SHADOWED}"})]})
            ws.fire("on_error")
        wait_for(lambda: receiver.requests, what="the webhook")
        [request] = receiver.requests
        assert request["path"] == "/from-secrets"
        assert json.loads(request["body"]) == {"v": "from-env"}
    finally:
        secrets.unlink()


def test_a_failing_fire_and_forget_webhook_is_not_silent(ws: Workspace, receiver: Receiver,
                                                         capfd: pytest.CaptureFixture[str]
                                                         ) -> None:
    """Not awaited, a webhook's failure still reaches a person: a warning in initd's log
    and its result in the session's event lines."""
    receiver.statuses = [500] * 5
    ws.pipeline({"on_error": [webhook(receiver.url, retries=0, timeout=0.3)]})
    [started] = ws.fire("on_error")["results"]
    assert started["status"] == "started"
    assert ws.engine is not None and ws.engine.sessions is not None
    events = Path(ws.engine.sessions.events_path)

    def failed() -> list[dict[str, Any]]:
        lines = events.read_text().splitlines() if events.exists() else []
        return [r for line in lines for r in json.loads(line)["results"]
                if r["status"] == "error"]
    wait_for(failed, what="the webhook's failure in the session's events")
    assert "500" in failed()[0]["error"]
    logged = capfd.readouterr().err
    assert "background hook done" in logged and "500" in logged


# --- the package itself (initd/events/actions/__init__.py): a placeholder's value, and
# what an earlier delivery of the request did with a hook


def test_where_a_placeholders_value_comes_from() -> None:
    from initd.events import templates
    from tests.support.calls import call

    made = call(payload={"file": "/w/a", "tool_name": "Bash", "SLACK_WEBHOOK": "evil"},
                variables={"ITERATION": 3, "SLACK_WEBHOOK": "https://real", "PATH": "/x"},
                env={"SLACK_WEBHOOK": "https://real", "PATH": "/bin", "HOME": "/h"})
    assert made.lookup("{}", "file") == "/w/a"
    assert made.lookup("{{}}", "tool_name") == "Bash"
    assert made.lookup("{{}}", "iteration") == 3  # the table, in lower case
    assert made.lookup("${}", "ITERATION") == 3  # typed, for conditions
    assert made.lookup("${}", "SLACK_WEBHOOK") == "https://real"  # never the payload's
    assert made.lookup("${}", "PATH") == "/bin"  # initd's environment won over the table
    assert made.lookup("${}", "NOPE") is templates.MISSING and made.value("NOPE") is None
    assert made._replace(payload={}).lookup("{}", "file") is templates.MISSING


def test_what_an_earlier_delivery_did() -> None:
    from initd.events.actions import ActionResult, Status, replayed
    from initd.state import jsonview
    from initd.state.journal import LOST

    ran = ActionResult(Status.FAILED, 2, "out", "no", unknown=("{{x}}",))
    assert replayed(jsonview.view(ran)) == ran  # recorded: given again, not run
    assert replayed("started").status == Status.STARTED
    assert replayed("error").status == Status.ERROR
    lost = replayed(LOST)
    assert lost.status == Status.ERROR and lost.fails_closed  # it may have said no
    assert not replayed(LOST, awaited=False).fails_closed
    assert replayed({"status": "ok", "exitCode": 0, "bogus": 1}) == ActionResult(Status.OK, 0)
    assert replayed({"status": "no such status"}).fails_closed  # not what initd wrote
    assert replayed({"exitCode": 0}).fails_closed and replayed([1]).fails_closed
