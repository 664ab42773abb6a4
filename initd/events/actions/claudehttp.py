"""Claude Code's ``type: http`` hook, a webhook (https://code.claude.com/docs/en/hooks, "HTTP
hook fields" and "HTTP response handling"): the hook's JSON input, as a command hook reads
it on stdin, is POSTed to its ``url`` with ``Content-Type: application/json``; its
``headers`` are sent with ``$VAR`` and ``${VAR}`` filled in from the hook's environment
for the names in ``allowedEnvVars`` only (any other is replaced by nothing).

What comes back is read as the reference reads it: a 2xx with an empty body is exit 0
without output; a 2xx with a JSON object is parsed as a command hook's stdout; a non-2xx
status, or no connection, is a non-blocking error. A 2xx body initd cannot read as an
answer (cut-off JSON, plain text) is that hook's error, and blocks a blockable event
(invariant 12: an answer initd could not read is never "no answer").
"""

from __future__ import annotations

import http.client
import re
import time
import urllib.parse

from initd.events import answers
from initd.events.actions import ActionResult, Call, Status
from initd.events.model import HttpHook
from initd.http import jsonstream

_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def headers(spec: HttpHook, env: dict[str, str]) -> dict[str, str]:
    """The hook's headers with the allowed variables filled in (the others: empty)."""
    def fill(found: re.Match[str]) -> str:
        name = found.group(1) or found.group(2)
        return env.get(name, "") if name in spec.allowed_env else ""
    filled = {name: _VARIABLE.sub(fill, value) for name, value in spec.headers.items()}
    # a variable's value never adds a header line of its own (a CR or LF in it)
    return {name: re.sub(r"[\r\n\0]", "", value) for name, value in filled.items()}


def send(call: Call, spec: HttpHook) -> ActionResult:
    started = time.monotonic()
    # the body as a command hook's stdin is written, a piece at a time (a Write's file in
    # it): its length first, from one pass over the pieces, then the pieces sent
    length = sum(len(piece) for piece in jsonstream.encoded(call.stdin))
    parts = urllib.parse.urlsplit(spec.url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else \
        http.client.HTTPConnection
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        conn = kind(parts.hostname or "", parts.port, timeout=call.hook.timeout)
        try:
            conn.request("POST", path, body=jsonstream.encoded(call.stdin), headers={
                **headers(spec, call.env), "Content-Type": "application/json",
                "Content-Length": str(length)})
            response = conn.getresponse()
            raw = response.read(answers.ANSWER_LIMIT + 1)
            status = response.status
        finally:
            conn.close()
    except TimeoutError:
        return ActionResult(Status.ERROR, timed_out=True, duration_ms=_ms(started),
                            error=f"timed out after {call.hook.timeout:g}s")
    except (OSError, http.client.HTTPException, ValueError) as err:
        return ActionResult(Status.ERROR, duration_ms=_ms(started),
                            error=f"could not POST to {spec.url}: {err} (a non-blocking "
                            "error, as in Claude Code)")
    shown = answers.kept(raw[:answers.ANSWER_LIMIT], b"", len(raw) <= answers.ANSWER_LIMIT)
    out = shown.pop("stdout")
    text = raw[:answers.ANSWER_LIMIT].decode(errors="replace")
    if not 200 <= status < 300:
        return ActionResult(Status.FAILED, stderr=out, duration_ms=_ms(started),  # (no answer)
                            error=f"HTTP {status} from {spec.url} (a non-blocking error)")
    if text.strip() and not text.lstrip().startswith("{"):
        return ActionResult(Status.ERROR, stdout=out, duration_ms=_ms(started),
                            fails_closed=True, error=f"HTTP {status} with a body that is "
                            "not a JSON object: initd cannot read its answer")
    return ActionResult(Status.OK, 0, out, "", False, _ms(started), **shown)


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
