"""The API against its own OpenAPI document: generated requests, no 5xx, every response
conforming (schemathesis, in-process over WSGI)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi import checks as oc

from initd.config import log
from initd.config.values import Restart
from initd.process import spawn
from initd.process.channel import Channel
from initd.service.app import make_app
from initd.service.core import HookService
from initd.service.link import SupervisorLink
from initd.supervisor.backoff import Backoff
from initd.supervisor.loop import describe
from initd.supervisor.supervised import Supervised
from tests.hooks.support import checker, forget_session, git_repo, hook_context
from tests.support.harness import wait_for


@pytest.fixture
def api_schema(tmp_path: Path) -> Iterator[object]:
    repo = git_repo(tmp_path / "ws", identity=False)
    checker(repo, "10-a.sh", "*.a", "BAD")
    (repo / "x.a").write_text("BAD\n")
    (repo / ".nyzhi").mkdir()
    (repo / ".nyzhi" / "config.toml").write_text(  # so that events have results to show
        '[[agent.hooks]]\nevent = "after_turn"\ncommand = "echo turned; exit 2"\n'
        '[[agent.hooks]]\nevent = "pre_tool"\ncommand = "sleep 9"\ntimeout = 0.1\n')
    sid = f"oas-{uuid.uuid4().hex[:8]}"
    app = make_app(HookService(hook_context(repo, sid), str(repo / "no-image")))
    yield schemathesis.openapi.from_wsgi("/v1/openapi.json", app)
    forget_session(sid)


@pytest.fixture
def linked_schema(tmp_path: Path) -> Iterator[object]:
    """The service as initd runs it: a real link on a real socketpair, told by the
    supervisor's own describe() of an agent that is not ready (so /v1/ready is a 503)."""
    repo = git_repo(tmp_path / "ws", identity=False)
    sid = f"oas-{uuid.uuid4().hex[:8]}"
    supervisor_end, service_fd = Channel.pair()
    link = SupervisorLink(Channel.from_fd(service_fd), log.get())
    spec = spawn.Spec(argv=("true",), env={}, cwd="/")
    agent, service = (Supervised(name, spec, Restart.NEVER, Backoff(1, 1), 1, log.get())
                      for name in ("agent", "hook-service"))
    supervisor_end.send({"op": "state", **describe(agent, service, "running")})
    wait_for(lambda: link.state, what="the state pushed")
    app = make_app(HookService(hook_context(repo, sid), str(repo / "no-image"), link=link))
    yield schemathesis.openapi.from_wsgi("/v1/openapi.json", app)
    supervisor_end.close()
    forget_session(sid)


@pytest.mark.slow
def test_api_conforms_to_its_openapi_document(api_schema) -> None:
    """Every operation: generated requests (valid and not), no 5xx, responses that match
    the document. (Driven without schemathesis' pytest plugin, which pytest 9 breaks.)"""
    operations = [result.ok() for result in api_schema.get_all_operations()]
    # (schemathesis leaves out GET /v1/openapi.json, the path it loaded the document from)
    assert {op.label for op in operations} == {
        "GET /v1/health", "GET /v1/ready", "GET /v1/hooks",
        "GET /v1/status", "GET /v1/hooks/{hookId}/output", "POST /v1/hooks/{hookId}/rerun",
        "POST /v1/turn", "POST /v1/turn/cancel", "POST /v1/events/{event}",
        "POST /v1/trust", "GET /v1/services", "POST /v1/services/{name}/{verb}"}
    for operation in operations:
        @given(case=operation.as_strategy())
        @settings(max_examples=15, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def check(case: schemathesis.Case) -> None:
            response = case.call()
            # a key generated again with another body is refused, as the IETF draft says
            # (a 422, documented): valid data, rightly rejected, for a reason that lies
            # in an earlier request, which schemathesis' "accepted" check cannot see
            reused = response.status_code == 422 and "Idempotency-Key" in response.text
            case.validate_response(response, excluded_checks=[
                oc.positive_data_acceptance] if reused else None)

        check()


@pytest.mark.slow
def test_health_and_a_not_ready_agent_conform_too(linked_schema) -> None:
    seen = set()
    for result in linked_schema.get_all_operations():
        operation = result.ok()
        if operation.label not in ("GET /v1/health", "GET /v1/ready"):
            continue
        case = operation.Case()
        response = case.call()
        # 503 is documented (and what a readiness probe needs): check it conforms, but
        # not schemathesis' "no 5xx" rule, which is for bugs
        case.validate_response(response, checks=[
            oc.status_code_conformance, oc.content_type_conformance,
            oc.response_schema_conformance])
        seen.add((operation.label, response.status_code))
    assert seen == {("GET /v1/health", 200), ("GET /v1/ready", 503)}


@pytest.mark.slow
def test_event_outcomes_conform(api_schema) -> None:
    """The outcomes of real hooks (a non-blockable exit 2; a timeout) against the document."""
    [operation] = [r.ok() for r in api_schema.get_all_operations()
                   if r.ok().label == "POST /v1/events/{event}"]
    for event in ("after_turn", "pre_tool", "PreToolUse", "nope"):
        case = operation.Case(path_parameters={"event": event}, body={"tool_name": "bash"})
        response = case.call()
        case.validate_response(response)
        assert response.status_code == (404 if event == "nope" else 200)
