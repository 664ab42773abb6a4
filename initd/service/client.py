"""A client for the control API on its Unix socket (the CLI verbs use it)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
from typing import Any

from initd.errors import InitdError
from initd.settings import DEFAULT_SOCKET, default_socket


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float | None = None) -> None:
        super().__init__("initd", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        """Connect; a full backlog (EAGAIN: many clients at once, or a service that
        restarts) is waited out within the timeout, as a TCP client's SYN would be."""
        deadline = time.monotonic() + (self.timeout if self.timeout is not None else 60)
        pause = 0.01
        while True:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            if self.timeout is not None:
                self.sock.settimeout(self.timeout)
            try:
                self.sock.connect(self.socket_path)
                return
            except BlockingIOError:
                self.sock.close()
                if time.monotonic() + pause > deadline:
                    raise TimeoutError("its backlog stayed full") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.2)


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
         timeout: float | None = None) -> tuple[int, Any]:
    """(status, decoded JSON); an unreachable service is an InitdError saying so."""
    where = socket_path(sock)
    conn = UnixHTTPConnection(where, timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        conn.request(method, path, body=data,
                     headers={"Content-Type": "application/json"} if data else {})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"null")
    except (FileNotFoundError, ConnectionRefusedError) as err:
        raise InitdError(f"no hook service at {where} ({err.strerror}); is initd running? "
                         "(--socket or INITD_SOCKET)") from None
    except PermissionError:
        raise InitdError(f"{where}: permission denied (the socket is for root and the "
                         "agent user's group)") from None
    except http.client.HTTPException as err:  # (an IncompleteRead: it died mid-answer)
        raise InitdError(f"the hook service at {where} stopped in the middle of its answer "
                         f"({type(err).__name__}); it restarts by itself: ask again") from None
    except TimeoutError:  # bound by root, so connecting works; nobody answers yet
        within = f" within {timeout:g}s" if timeout is not None else ""
        raise InitdError(f"no answer from the hook service at {where}{within} (starting, "
                         "restarting, or busy)") from None
    except OSError as err:
        raise InitdError(f"the hook service at {where}: {err.strerror or err}") from None
    finally:
        conn.close()
