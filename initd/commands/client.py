"""A client for the control API on its Unix socket (the CLI verbs use it).

Every exec probe (``initd ready``, every few seconds in every pod) runs this, so it
imports what it needs: ``socket``, json only to encode or decode a body, no typing at run
time.
"""

from __future__ import annotations

import os
import socket
import time

from initd.config.paths import DEFAULT_SOCKET, default_socket
from initd.errors import InitdError, one_line, shown

TYPE_CHECKING = False
if TYPE_CHECKING:  # (typing's import is most of a probe's own cost)
    from typing import Any

MAX_ANSWER = 64 * 2**20  # a status.json is a few KiB; past this it is not an answer
REASON_SHOWN = 500  # characters of a refusal's reason (the service's: it may be huge)


class Incomplete(Exception):
    """The answer stopped before its end (the service died while answering)."""


def _connect(path: str, timeout: float | None) -> socket.socket:
    """Connected; a full backlog (EAGAIN: many clients at once, or a service that
    restarts) is waited out within the timeout, as a TCP client's SYN would be."""
    deadline = time.monotonic() + (timeout if timeout is not None else 60)
    pause = 0.01
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(path)
            return sock
        except BlockingIOError:
            sock.close()
            if time.monotonic() + pause > deadline:
                raise TimeoutError("its backlog stayed full") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
        except BaseException:
            sock.close()
            raise


def _exchange(sock: socket.socket, request: bytes,
              deadline: float | None = None) -> tuple[int, bytes]:
    """HTTP/1.0 as initd's server speaks it: one request, an answer with its length,
    then the end of the connection, all of it by ``deadline`` (a socket's timeout is per
    call: a service dribbling a byte a second would hold a probe for good). http.client
    would cost every probe its imports (email parsing) for this."""
    sock.sendall(request)
    chunks, size = [], 0
    while True:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the answer did not end in time")
            sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_ANSWER:
            raise Incomplete(f"an answer over {MAX_ANSWER} bytes")
    raw = b"".join(chunks)
    head, gap, body = raw.partition(b"\r\n\r\n")
    status_line, *fields = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if not gap or len(parts) < 2 or not parts[0].startswith("HTTP/") \
            or not _number(parts[1], 3):
        raise Incomplete("no whole answer")
    for field in fields:
        name, _, value = field.partition(":")
        if name.strip().lower() == "content-length" and _number(value.strip(), 18) \
                and len(body) < int(value):
            raise Incomplete(f"{len(body)} of {int(value)} bytes")
    return int(parts[1]), body


def _number(text: str, digits: int) -> bool:
    """ASCII digits only, at most ``digits`` of them: the answer is the service's, and the
    service is the agent's ("²".isdigit() is true, and int("²") raises)."""
    return 0 < len(text) <= digits and text.isascii() and text.isdigit()


def new_key() -> str:
    """An Idempotency-Key for one request of this process."""
    return f"initd-{os.getpid()}-{os.urandom(12).hex()}"


def socket_path(given: str | None = None) -> str:
    """--socket, INITD_SOCKET, else where initd listens by default: this user's own
    when it serves there (an initd that is not root), else root's when there is one (the
    agent user's `podman exec` into a root initd's container)."""
    if given or os.environ.get("INITD_SOCKET"):
        return given or os.environ["INITD_SOCKET"]
    mine = default_socket()
    return DEFAULT_SOCKET if not os.path.exists(mine) and os.path.exists(DEFAULT_SOCKET) \
        else mine


def call(method: str, path: str, body: Any = None, sock: str | None = None,
         timeout: float | None = None, key: str | None = None) -> tuple[int, Any]:
    """(status, decoded JSON); an unreachable service is an InitdError saying so.

    With ``key`` (an Idempotency-Key: initd/state/journal/) the request is sent again, with
    the same key, when the service died before its answer ended: it restarts on the same
    socket, and its journal runs no hook of the request twice."""
    import json

    data = None if body is None else json.dumps(body).encode()
    if key is None:
        status, answer = raw(method, path, data, sock, timeout)
    else:
        status, answer = _resent(method, path, data, sock, timeout, key)
    try:
        return status, json.loads(answer or b"null")
    except (ValueError, RecursionError) as err:  # (nested past the stack: the agent's)
        raise _failure(err, socket_path(sock), timeout) from None


RESENDS = 5  # of one request whose answer a dying service cut off
BUSY_WAIT = 30.0  # seconds a request is sent again while the service has no room for its
# body (503, "try again": other large requests at work); past that, its 503 stands


def _resent(method: str, path: str, data: bytes | None, sock: str | None,
            timeout: float | None, key: str) -> tuple[int, bytes]:
    pause, cuts = 0.1, 0
    busy_until = time.monotonic() + BUSY_WAIT
    while True:
        try:
            status, body = raw(method, path, data, sock, timeout, key, resend=cuts < RESENDS)
        except _Cut:
            cuts += 1  # the supervisor restarts the service (its backoff)
        else:
            if not (status == 503 and b"try again" in body
                    and time.monotonic() < busy_until):
                return status, body
        time.sleep(pause)
        pause = min(pause * 2, 1.0)


class _Cut(Exception):
    """The connection ended before the answer did: send the request again."""


def raw(method: str, path: str, data: bytes | None = None, sock: str | None = None,
        timeout: float | None = None, key: str | None = None,
        resend: bool = False) -> tuple[int, bytes]:
    """(status, the body as sent); an unreachable service is an InitdError saying so
    (with ``resend``, a cut answer is _Cut)."""
    where = socket_path(sock)
    deadline = None if timeout is None else time.monotonic() + timeout
    head = f"{_checked(method, path)} HTTP/1.0\r\nHost: initd\r\n"
    if key is not None:
        head += f"Idempotency-Key: {checked_key(key)}\r\n"
    if data is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
    try:
        conn = _connect(where, timeout)
        try:
            return _exchange(conn, f"{head}\r\n".encode() + (data or b""), deadline)
        finally:
            conn.close()
    except (OSError, Incomplete) as err:
        if resend and isinstance(err, Incomplete | ConnectionResetError | BrokenPipeError):
            raise _Cut from None
        raise _failure(err, where, timeout) from None


def _checked(method: str, path: str) -> str:
    """The request line, or InitdError: nothing a caller passes (a hook id the agent
    named, a path) is written into a request's head unchecked. A CR or LF there would end
    the line and forge a header of the caller's choosing; a space, a second target."""
    if not (method.isascii() and method.isalpha() and method.isupper()):
        raise InitdError(f"request method {shown(method)}: not an HTTP method: not sent")
    if not path.startswith("/") or not all("!" <= c <= "~" for c in path):
        raise InitdError(f"request path {shown(path)}: printable ASCII without spaces, "
                         "from /, expected: not sent")
    return f"{method} {path}"


def checked_key(key: str, given: str = "Idempotency-Key") -> str:
    """``key`` as an Idempotency-Key may be (1-200 printable ASCII characters, no space:
    the service's own rule), or InitdError (``given`` names where it came from): never
    sent as something else (an empty one is no "any key": it is refused)."""
    from initd.state.idempotency import BadKey, check_key  # (not for the probes: none)

    try:
        return check_key(key)
    except BadKey as err:
        raise InitdError(f"{given} {shown(key)}: {err}: not sent") from None


def _failure(err: Exception, where: str, timeout: float | None) -> InitdError:
    """What went wrong talking to the service at ``where``, as the one line to show."""
    if isinstance(err, FileNotFoundError | ConnectionRefusedError):
        return InitdError(f"no hook service at {where} ({err.strerror}); is initd running? "
                          "(--socket or INITD_SOCKET)")
    if isinstance(err, PermissionError):
        return InitdError(f"{where}: permission denied (the socket is for root and the "
                          "agent user's group)")
    if isinstance(err, Incomplete | ValueError | RecursionError | ConnectionResetError):
        return InitdError(f"the hook service at {where} stopped in the middle of its answer "
                          f"({err or type(err).__name__}); it restarts by itself: ask again")
    if isinstance(err, TimeoutError):  # bound by root, so connecting works; nobody answers
        within = f" within {timeout:g}s" if timeout is not None else ""
        return InitdError(f"no answer from the hook service at {where}{within} (starting, "
                          "restarting, or busy)")
    return InitdError(f"the hook service at {where}: {getattr(err, 'strerror', None) or err}")


def trust_verdict(key: str, digest: str) -> str | None:
    """Whether a person approved ``digest`` for ``key``, for the agent's own processes
    (the store is root's alone): asked of the hook service, which asks root. None when
    approved; a service that cannot be asked is a refusal, never an approval."""
    try:
        status, answer = call("POST", "/v1/trust", {"key": key, "digest": digest},
                              timeout=30)
    except InitdError as err:
        return f"not trusted: not checked ({err})"
    if status == 200 and isinstance(answer, dict) and answer.get("trusted") is True:
        return None
    why = answer.get("why") if isinstance(answer, dict) else None
    return str(why or f"not trusted: the hook service said {reason(answer)}")


def reason(answer: object) -> str:
    """Why the service said no, as one line of ours (``initd: …``): its ``error``, every
    unprintable character escaped. The service is the agent's, and root may be the one
    reading: a reason with a newline must not forge a line of initd's."""
    said = answer.get("error", answer) if isinstance(answer, dict) else answer
    text = one_line(str(said))
    return f"initd: {text[:REASON_SHOWN]}{'…' if len(text) > REASON_SHOWN else ''}"


def refused_key(code: int, answer: Any) -> None:
    """A request the service would not run under its key: 422 (the key of an earlier
    request with another body) or 409 (the key of one still running, or a turn while
    another runs) is InitdError, one line (exit 125): not an answer to print."""
    if code in (409, 422):
        raise InitdError(f"HTTP {code}: {reason(answer).removeprefix('initd: ')}")


def show(code: int, answer: Any) -> int:
    """A verb's answer: the JSON, indented, and 0; or the service's reason on stderr, 1."""
    import json
    import sys

    if code != 200:
        print(reason(answer), file=sys.stderr)
        return 1
    print(json.dumps(answer, indent=2))
    return 0
