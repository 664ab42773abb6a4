"""The control API as a WSGI application: routes, JSON in and out, errors as JSON.

WSGI keeps it testable in-process (and by schemathesis against openapi.yaml); the
server module puts it on the Unix socket.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from initd.events.engine import UnknownEvent
from initd.events.wire import Wire, WireError, passed_on
from initd.hooks.changes import NotARepository
from initd.hooks.truststore import KEY_LIMIT, well_formed
from initd.http import jsonbody
from initd.http.server import REASONS
from initd.http.spool import Body
from initd.service import views
from initd.service.core import Busy, HookService
from initd.service.link import LinkDown
from initd.state.agentfs import Unsafe
from initd.state.idempotency import BadKey, check_key
from initd.state.journal import InFlight, KeyReused

SPEC = Path(__file__).with_name("openapi.yaml")
Environ = dict[str, Any]
StartResponse = Callable[[str, list[tuple[str, str]]], object]
MAX_BODY = 64 * 1024  # of a request's body: the API's are small JSON objects...
EVENT_BODY = 16 * 2**20  # ...but an event's payload carries a Write's whole file


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class NotTaken(HttpError):
    """A body the API cannot take (too big, nested too deep): on an event, the event is
    answered as blocked instead (invariant 12)."""


def make_app(service: HookService) -> Callable[[Environ, StartResponse], Iterable[bytes]]:
    routes: list[tuple[str, re.Pattern[str], Callable[..., tuple[int, Any]]]] = [
        ("GET", re.compile(r"/v1/health"), lambda env: (200, service.health())),
        ("GET", re.compile(r"/v1/ready"), lambda env: _ready(service)),
        ("GET", re.compile(r"/v1/openapi\.json"), lambda env: (200, _spec())),
        ("GET", re.compile(r"/v1/hooks"), lambda env: (200, views.hooks(service.discover()))),
        ("GET", re.compile(r"/v1/status"), lambda env: (200, service.status())),
        ("GET", re.compile(r"/v1/hooks/([^/]+)/output"),
         lambda env, hook_id: _output(service, hook_id)),
        ("POST", re.compile(r"/v1/hooks/([^/]+)/rerun"),
         lambda env, hook_id: _rerun(service, hook_id)),
        ("POST", re.compile(r"/v1/turn"), lambda env: _turn(service, _body(env), _key(env))),
        ("POST", re.compile(r"/v1/turn/cancel"),
         lambda env: (200, {"cancelled": service.cancel()})),
        ("POST", re.compile(r"/v1/trust"), lambda env: _trust(service, _body(env))),
        ("GET", re.compile(r"/v1/services"), lambda env: (200, _services(service))),
        ("POST", re.compile(r"/v1/services/([^/]+)/(start|stop|restart)"),
         lambda env, name, verb: _control(service, name, verb)),
        ("POST", re.compile(r"/v1/events/([^/]+)"),
         lambda env, name: _event(service, name, env)),
    ]

    def app(environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")
        try:
            status, body = _dispatch(routes, environ, method, path)
        except HttpError as err:
            status, body = err.status, {"error": str(err)}
        except KeyReused as err:  # IETF draft-ietf-httpapi-idempotency-key-header, "Error
            # Scenarios": "If there is an attempt to reuse an idempotency key with a
            # different request payload, the resource server SHOULD reply with a HTTP 422"
            status, body = 422, {"error": str(err)}
        except InFlight as err:  # ibid.: "If the request is retried, while the original
            # request is still being processed, the resource server SHOULD reply with an
            # HTTP 409" (and "Concurrent Request": it "MUST respond with a resource
            # conflict error"). It does not wait: the first may run its hooks for hours.
            status, body = 409, {"error": str(err)}
        except NotARepository as err:  # the workspace, not the request or initd
            status, body = 422, {"error": str(err)}
        except Unsafe as err:  # the hooks' state is a link, a FIFO...: the home, not initd
            status, body = 422, {"error": f"the hooks' state cannot be used: {err}"}
        except Exception as err:  # a bug must still answer in JSON, and say what broke
            status, body = 500, {"error": f"internal error: {type(err).__name__}: {err}"}
        payload = json.dumps(body).encode()
        start_response(f"{status} {REASONS[status]}", [
            ("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
        return [payload]

    return app


def _dispatch(routes: list[tuple[str, re.Pattern[str], Callable[..., tuple[int, Any]]]],
              environ: Environ, method: str, path: str) -> tuple[int, Any]:
    allowed = []
    for verb, pattern, handler in routes:
        match = pattern.fullmatch(path)
        if match:
            if verb == method:
                return handler(environ, *match.groups())
            allowed.append(verb)
    if allowed:
        raise HttpError(405, f"use {' or '.join(allowed)} {path}")
    raise HttpError(404, f"no such endpoint: {path} (see GET /v1/openapi.json)")


def _body(environ: Environ, limit: int = MAX_BODY) -> dict[str, Any]:
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise HttpError(400, "Content-Length is not a number") from None
    if length < 0:  # read(-1) would read whatever the client sends, to its end
        raise HttpError(400, "Content-Length is negative")
    if length > limit:  # (the server read it to its end and dropped it: http/wire.py)
        raise NotTaken(413, f"body over {limit} bytes ({length})")
    body = environ["wsgi.input"]
    try:
        if isinstance(body, Body):  # past SPOOL_AT, in its file: read a piece at a time
            read = jsonbody.load(body.fileno(), length)
            body.keep(read.places)  # (hooks' stdin copies its long strings from there)
            data = read.value
        else:
            data = json.loads(body.read(length) if length else b"{}")
    except jsonbody.TooBig as err:
        raise NotTaken(400 if "nested" in str(err) else 413, str(err)) from None
    except ValueError:  # (jsonbody.NotJson too)
        raise HttpError(400, "body is not valid JSON") from None
    except RecursionError:  # [[[[… 30,000 deep: the client's mistake, not a 500
        raise NotTaken(400, "body is nested too deep for initd to read") from None
    if not isinstance(data, dict):
        raise HttpError(400, "body must be a JSON object")
    return data


def _key(environ: Environ) -> str | None:
    """The request's Idempotency-Key (initd/state/journal/), if it has one."""
    key = environ.get("HTTP_IDEMPOTENCY_KEY")
    if key is None:
        return None
    try:
        return check_key(key)
    except BadKey as err:
        raise HttpError(400, str(err)) from None


def _turn(service: HookService, body: dict[str, Any], key: str | None) -> tuple[int, Any]:
    trigger = body.get("trigger", "user")
    if trigger not in ("user", "hook"):
        raise HttpError(400, "trigger: expected 'user' (a person's message) or 'hook' (a "
                             "re-prompt initd asked for)")
    try:
        return 200, service.turn(trigger, key)
    except Busy:
        raise HttpError(409, "an evaluation is already running; POST /v1/turn/cancel "
                             "first (a new user message should)") from None


def _event(service: HookService, name: str, environ: Environ) -> tuple[int, Any]:
    """Fire ``name`` with the body as its payload: 200 with the outcome (blocked or not).
    A payload the API cannot take (over EVENT_BODY, nested too deep) runs no hook: its
    outcome says so, with an error that blocks a blockable event (invariant 12: a guard
    that never saw the tool call must not read as "allowed")."""
    key, agent = _key(environ), _agent(environ)
    try:
        try:
            payload = _body(environ, EVENT_BODY)
        except NotTaken as err:
            if agent is not None:  # (its event's name may be in the body it could not read)
                name = agent.inbound({}, None if name == "-" else name).event
            outcome = service.events.refuse(name, f"the event's payload could not be "
                                            f"taken: {err}; no hook saw it")
            return 200, {**outcome.as_json(), "replayed": False, "journaled": False}
        if agent is None:
            return 200, service.fire(name, payload, key)
        came = agent.inbound(payload, None if name == "-" else name)
        origin = came.origin._replace(env=passed_on(agent, came.event, _env(environ)))
        return 200, service.fire(came.event, came.payload, key, origin)
    except (UnknownEvent, WireError) as err:
        raise HttpError(404, str(err)) from None


def _agent(environ: Environ) -> Wire | None:
    """``?from=AGENT``: the wire of the agent whose payload the body is (events/wire.py)."""
    from initd.events.dialects import WIRES

    said = urllib.parse.parse_qs(environ.get("QUERY_STRING") or "").get("from")
    if not said:
        return None
    if said[0] not in WIRES:
        raise HttpError(404, f"from: no agent {said[0]!r} calls initd (known: "
                             f"{', '.join(WIRES)})")
    return WIRES[said[0]]


def _env(environ: Environ) -> dict[str, str]:
    """``?env=NAME=VALUE`` (each once): the agent's hook environment ``initd emit --from``
    passed on (its wire's ``passes`` says which names count)."""
    said = urllib.parse.parse_qs(environ.get("QUERY_STRING") or "").get("env") or []
    return {name: value for name, _, value in (entry.partition("=") for entry in said)}


def _trust(service: HookService, body: dict[str, Any]) -> tuple[int, Any]:
    """Is this hook's hash approved? For the agent's own `initd precommit run` and `initd
    hooks run` under --trust: the store is root's alone (0600), so they ask here, and
    this service asks root. It says whether the store approves this hash, in the same
    words whatever else the store holds (core.trust_verdict), and never approves."""
    key, digest = body.get("key"), body.get("digest")
    if not well_formed(key, digest):
        raise HttpError(400, f"expected {{\"key\": text of at most {KEY_LIMIT} characters, "
                             "\"digest\": a sha256 in hex}")
    why = service.trust_verdict(str(key), str(digest))
    return 200, {"trusted": why is None, "why": why}


def _ready(service: HookService) -> tuple[int, Any]:
    """200 or 503, as a Kubernetes httpGet probe reads it; the reason either way."""
    ready, reason, agent = service.readiness()
    if ready:
        return 200, {"ready": True, "reason": reason, "agent": agent}
    return 503, {"ready": False, "error": reason, "agent": agent}


def _output(service: HookService, hook_id: str) -> tuple[int, Any]:
    output = service.output(hook_id)
    if output is None:
        raise HttpError(404, f"no output for hook {hook_id!r} (has it run?)")
    return 200, {"hookId": hook_id, "output": output}


def _rerun(service: HookService, hook_id: str) -> tuple[int, Any]:
    try:
        result = service.rerun(hook_id)
    except Busy:
        raise HttpError(409, "an evaluation or a rerun is running; try again when it is "
                             "done (POST /v1/turn/cancel stops an evaluation)") from None
    if result is None:
        raise HttpError(404, f"no hook {hook_id!r} (GET /v1/hooks lists them)")
    return 200, result


def _services(service: HookService) -> dict[str, Any]:
    """The image's services as the supervisor last said (never their environment)."""
    state = service.link.state if service.link is not None else {}
    return {"services": state.get("services") or {}}


def _control(service: HookService, name: str, verb: str) -> tuple[int, Any]:
    """Root decides (only a service of the agent's own uid: supervisor/services.py)."""
    if service.link is None:
        raise HttpError(404, "no supervisor: no services to control")
    try:
        reply = service.link.request("control", service=name, verb=verb)
    except LinkDown as err:
        raise HttpError(503, str(err)) from None
    status = reply.get("status")
    if status not in (200, 403, 404, 409, 500):
        raise HttpError(500, "no answer from initd's supervisor")
    if status != 200:
        raise HttpError(status, str(reply.get("error")))
    return 200, {"service": name, "verb": verb, "result": reply.get("result")}


def _spec() -> Any:
    """The spec, with the registry's formats (one list: events/dialects/__init__.py)."""
    import yaml

    from initd.events.dialects import DIALECTS

    spec = yaml.safe_load(SPEC.read_text(encoding="utf-8"))
    result = spec["components"]["schemas"]["Outcome"]["properties"]["results"]["items"]
    result["properties"]["dialect"]["enum"] = list(DIALECTS)
    return spec
