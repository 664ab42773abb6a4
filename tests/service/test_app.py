"""The control API's routes (initd/service/app.py), called in-process over WSGI: every
answer JSON, a bad request a 4xx naming what was wrong (never a 500), an Idempotency-Key
checked, a payload the API cannot take answered as blocked on a blockable event
(invariant 12), and another agent's payload read by its wire. Over a real socket:
tests/service/test_api.py; against its OpenAPI document: test_openapi.py."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from initd.service import app as api
from initd.service.core import HookService
from tests.hooks.support import add_hook, forget_session, git_repo, hook_context

App = Any


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    repo = git_repo(tmp_path / "ws")
    add_hook(repo / ".discobot" / "hooks", "10-guard.sh",
             'grep -q "rm -rf" && { echo "no rm" >&2; exit 2; }; exit 0', type="pre_tool")
    sid = f"app-{uuid.uuid4().hex[:8]}"
    service = HookService(hook_context(repo, sid), str(repo / "no-image"))
    yield api.make_app(service)
    service.close()
    forget_session(sid)


def call(app: App, method: str, path: str, body: bytes | object = b"",
         query: str = "", **headers: str) -> tuple[int, Any]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query,
               "CONTENT_LENGTH": str(len(raw)), "wsgi.input": io.BytesIO(raw),
               **{f"HTTP_{k.upper()}": v for k, v in headers.items()}}
    said: list[str] = []
    payload = b"".join(app(environ, lambda status, headers: said.append(status)))
    return int(said[0].split()[0]), json.loads(payload)


def test_health_and_hooks(app: App) -> None:
    code, health = call(app, "GET", "/v1/health")
    assert code == 200 and isinstance(health, dict)
    code, listing = call(app, "GET", "/v1/hooks")
    assert code == 200 and [h["name"] for h in listing["hooks"]] == ["10-guard.sh"]
    code, spec = call(app, "GET", "/v1/openapi.json")
    assert code == 200 and spec["openapi"].startswith("3.")


@pytest.mark.parametrize(("method", "path", "code", "said"), [
    ("GET", "/v1/nope", 404, "no such endpoint: /v1/nope"),
    ("DELETE", "/v1/health", 405, "use GET /v1/health"),
    ("GET", "/v1/turn", 405, "use POST /v1/turn"),
    ("GET", "/v1/hooks/none/output", 404, "no output for hook 'none'"),
    ("POST", "/v1/hooks/none/rerun", 404, "no hook 'none'"),
])
def test_what_is_no_route(app: App, method: str, path: str, code: int, said: str) -> None:
    got, answer = call(app, method, path)
    assert got == code and answer["error"].startswith(said)


@pytest.mark.parametrize(("body", "length", "code", "said"), [
    (b"{", None, 400, "body is not valid JSON"), (b"[1]", None, 400,
                                                  "body must be a JSON object"),
    (b"{}", "x", 400, "Content-Length is not a number"),
    (b"{}", "-1", 400, "Content-Length is negative"),
    (b"[" * 50_000, None, 400, "body is nested too deep"),
    (b"{}", str(api.MAX_BODY + 1), 413, f"body over {api.MAX_BODY} bytes"),
    (b'{"trigger": "bot"}', None, 400, "trigger: expected 'user'"),
])
def test_a_bad_body_is_a_4xx_saying_why(app: App, body: bytes, length: str | None, code: int,
                                        said: str) -> None:
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": "/v1/turn",
               "CONTENT_LENGTH": length or str(len(body)), "wsgi.input": io.BytesIO(body)}
    status: list[str] = []
    answer = json.loads(b"".join(app(environ, lambda s, h: status.append(s))))
    assert status[0].startswith(str(code)) and answer["error"].startswith(said)


@pytest.mark.parametrize("key", ["", "a b", "x" * 201, "nl\n"])
def test_a_bad_idempotency_key_is_a_400(app: App, key: str) -> None:
    code, said = call(app, "POST", "/v1/events/pre_tool", {}, Idempotency_Key=key)
    assert code == 400 and "error" in said


def test_an_event_is_fired_and_blocked(app: App) -> None:
    code, outcome = call(app, "POST", "/v1/events/pre_tool",
                         {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}})
    assert code == 200 and outcome["blocked"] and "no rm" in outcome["reason"]
    code, outcome = call(app, "POST", "/v1/events/pre_tool", {"tool_name": "Bash"})
    assert code == 200 and not outcome["blocked"]
    assert call(app, "POST", "/v1/events/nope", {})[0] == 404


def test_a_payload_it_cannot_take_is_answered_as_blocked(app: App) -> None:
    code, outcome = call(app, "POST", "/v1/events/pre_tool", b"[" * 100_000)
    assert code == 200 and outcome["blocked"] and "could not be taken" in outcome["reason"]
    code, outcome = call(app, "POST", "/v1/events/after_turn", b"[" * 100_000)
    assert code == 200 and not outcome["blocked"]  # nothing to block


def test_another_agents_payload_by_its_wire(app: App) -> None:
    code, outcome = call(app, "POST", "/v1/events/-", {
        "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /"}}, query="from=claude")
    assert code == 200 and outcome["blocked"]
    assert call(app, "POST", "/v1/events/-", {}, query="from=nobody")[0] == 404
    assert call(app, "POST", "/v1/events/-", {"hook_event_name": "Nope"},
                query="from=claude")[0] == 404


def test_trust_questions_are_checked_and_never_approved_here(app: App) -> None:
    code, said = call(app, "POST", "/v1/trust", {"key": "/ws/a.sh", "digest": "nope"})
    assert code == 400 and "a sha256 in hex" in said["error"]
    code, said = call(app, "POST", "/v1/trust", {"key": "/ws/a.sh", "digest": "a" * 64})
    assert code == 200 and said["trusted"] is False and said["why"]


def test_a_turn_with_no_file_hook_runs_nothing_and_says_so(app: App) -> None:
    code, said = call(app, "POST", "/v1/turn", {"trigger": "user"})
    assert code == 200 and (said["action"], said["results"], said["replayed"]) == (
        "none", [], False)
