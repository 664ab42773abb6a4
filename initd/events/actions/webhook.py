"""``webhook``: an HTTP request with its URL, headers and body resolved (the body sent as
JSON, so every value is escaped by serialising), over HTTPS unless the host is this
machine; a send that fails (no connection, a 5xx) is retried ``retries`` times.

With ``await: true``, a callback server on 127.0.0.1 (once the URL is one initd sends to)
waits for the answer before the request goes out: ``${CALLBACK_URL}`` is its URL, with a
random token in the path that is compared in constant time and good for one call (a
wrong or replayed token gets 403).
The answer (a JSON body, a form, or the query string, as a JSON object) becomes
``HOOK_RESPONSE`` for the actions after it; no answer within ``timeout`` ends the wait,
and ``on_timeout: abort`` stops the run there.
"""

from __future__ import annotations

import hmac
import http.client
import http.server
import json
import secrets
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from initd.events import answers, templates
from initd.events.actions import ActionResult, Call, Status
from initd.events.model import Webhook

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
SEND_TIMEOUT = 30.0  # one attempt to deliver the request
ANSWER_LIMIT = 64 * 1024  # of a callback's body
PENDING_CALLBACK = "http://127.0.0.1/callback"  # a callback URL's scheme and host, known early


def send(call: Call, spec: Webhook) -> ActionResult:
    hook = call.hook
    started = time.monotonic()
    if hook.wait:  # the URL is judged before a port is taken: a refusal is the hook's error
        pending = {**call.variables, "CALLBACK_URL": PENDING_CALLBACK}  # whatever the port
        url, unknown = templates.url(spec.url, call._replace(variables=pending).lookup)
        refused = check_url(url)
        if refused:
            return ActionResult(Status.ERROR, error=refused, unknown=tuple(unknown))
    callback = None
    if hook.wait:
        try:
            callback = Callback(spec.callback_port)
        except OSError as err:
            return ActionResult(Status.ERROR, error=f"cannot listen for the callback on "
                                f"127.0.0.1:{spec.callback_port}: {err.strerror}")
        call = call._replace(variables={**call.variables, "CALLBACK_URL": callback.url})
    try:
        url, unknown = templates.url(spec.url, call.lookup)
        refused = check_url(url)
        if refused:
            return ActionResult(Status.ERROR, error=refused, unknown=tuple(unknown))
        body, more = templates.data(spec.body, call.lookup)
        headers, more_h = templates.data(spec.headers, call.lookup)
        unknown += more + more_h
        status, raw, error = _deliver(spec.method, url, headers, body, hook.retries,
                                      hook.retry_delay, call.cancel)
        ms = round((time.monotonic() - started) * 1000, 1)
        # shown as a process's stdout is (64 KiB); a JSON answer is read whole (answers.py)
        shown = answers.kept(raw[:answers.ANSWER_LIMIT], b"", len(raw) <= answers.ANSWER_LIMIT)
        answer = shown.pop("stdout")
        if error is not None:
            return ActionResult(Status.ERROR, None, answer, "", False, ms, error,
                                unknown=tuple(unknown))
        if status >= 400:
            return ActionResult(Status.FAILED, None, answer, "", False, ms,
                                f"{spec.method} {_safe(url)} answered HTTP {status}",
                                unknown=tuple(unknown), **shown)
        if callback is None:
            return ActionResult(Status.OK, None, answer, "", False, ms, unknown=tuple(unknown),
                                **shown)
        response = callback.wait(hook.timeout, call.cancel)
        ms = round((time.monotonic() - started) * 1000, 1)
        if response is None:
            why = "cancelled: initd is stopping" if call.cancel is not None and \
                call.cancel.is_set() else f"no callback within {hook.timeout:g}s"
            return ActionResult(Status.ERROR, None, answer, "", True, ms,
                                f"{why} (on_timeout: {spec.on_timeout})",
                                aborted=spec.on_timeout == "abort", unknown=tuple(unknown))
        return ActionResult(Status.OK, None, answer, "", False, ms, response=json.dumps(response),
                            unknown=tuple(unknown), **shown)
    finally:
        if callback is not None:
            callback.close()


def check_url(url: str) -> str | None:
    """Why initd will not send to ``url``, or None."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname in LOCAL_HOSTS:
        return None
    if parts.scheme == "http":
        return (f"refused to send to {_safe(url)}: plain http:// only for localhost; use "
                "https:// (webhook URLs often carry tokens)")
    return f"refused to send to {_safe(url)}: expected an https:// URL"


def _safe(url: str) -> str:
    """The URL without its path and query, which often hold tokens (Slack's do)."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/…" if parts.netloc else repr(url[:40])


def _deliver(method: str, url: str, headers: dict[str, str], body: Any, retries: int,
             delay: float, cancel: threading.Event | None) -> tuple[int, bytes, str | None]:
    """(HTTP status, the answer (one byte over answers.ANSWER_LIMIT at most: then it was
    longer), an error when it could not be delivered)."""
    data = None if body is None or method == "GET" else json.dumps(body).encode()
    request_headers = {"User-Agent": "initd-webhook", **headers}
    if data is not None:
        request_headers.setdefault("Content-Type", "application/json")
    error = ""
    for attempt in range(retries + 1):
        if attempt and (cancel or threading.Event()).wait(delay):  # a pause between
            return 0, b"", "cancelled: initd is stopping"         # tries, cut by a stop
        try:
            request = urllib.request.Request(url, data=data, headers=request_headers,
                                             method=method)
            with urllib.request.urlopen(request, timeout=SEND_TIMEOUT) as response:
                return response.status, _read(response), None
        except urllib.error.HTTPError as err:
            if err.code < 500:
                return err.code, _read(err), None
            error = f"HTTP {err.code}"
        except (OSError, ValueError, http.client.HTTPException) as err:
            error = str(getattr(err, "reason", err))  # URLError wraps the socket's error
    return 0, b"", (f"could not deliver {method} {_safe(url)} after {retries + 1} "
                   f"attempt(s): {error}")


def _read(response: Any) -> bytes:
    return bytes(response.read(answers.ANSWER_LIMIT + 1))


class Callback:
    """A one-shot HTTP server on 127.0.0.1 that waits for the answer to one webhook."""

    def __init__(self, port: int) -> None:
        self.token = secrets.token_urlsafe(24)
        self.answer: dict[str, Any] | None = None
        self.answered = threading.Event()
        self._lock = threading.Lock()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/callback/{self.token}"
        threading.Thread(target=self.server.serve_forever, name="webhook-callback",
                         daemon=True).start()

    def accept(self, token: str, answer: dict[str, Any]) -> bool:
        """True the first time the right token comes; never again (single use)."""
        with self._lock:
            if self.answered.is_set() or not hmac.compare_digest(
                    token.encode(), self.token.encode()):
                return False
            self.answer = answer
            self.answered.set()
            return True

    def wait(self, timeout: float, cancel: threading.Event | None) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        while not self.answered.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
            if time.monotonic() >= deadline or (cancel is not None and cancel.is_set()):
                return None
        return self.answer

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(callback: Callback) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer(b"")

        def do_POST(self) -> None:
            try:
                length = min(int(self.headers.get("Content-Length") or 0), ANSWER_LIMIT)
            except ValueError:
                length = 0
            self._answer(self.rfile.read(length))

        def _answer(self, body: bytes) -> None:
            parts = urllib.parse.urlsplit(self.path)
            prefix = "/callback/"
            if not parts.path.startswith(prefix):
                return self._reply(404, {"error": "not a callback URL"})
            answer = _parse(body)
            answer.update({k: v[-1] for k, v in urllib.parse.parse_qs(parts.query).items()})
            if not callback.accept(parts.path[len(prefix):], answer):
                return self._reply(403, {"error": "unknown or already used callback token"})
            return self._reply(200, {"ok": True})

        def _reply(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Not logged: the callback's URL holds its token."""
    return Handler


def _parse(body: bytes) -> dict[str, Any]:
    text = body.decode(errors="replace").strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except RecursionError:  # nested past the parser's limit: kept as the text it is
        return {"body": text}
    except ValueError:
        pairs = urllib.parse.parse_qs(text)
        return {k: v[-1] for k, v in pairs.items()} if pairs else {"body": text}
    return value if isinstance(value, dict) else {"body": value}
