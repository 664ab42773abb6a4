"""A client for the control API on its Unix socket (the CLI verbs use it)."""

from __future__ import annotations

import http.client
import json
import os
import socket
from typing import Any

from initd.errors import InitdError
from initd.settings import DEFAULT_SOCKET


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float | None = None) -> None:
        super().__init__("initd", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if self.timeout is not None:
            self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)


def socket_path(given: str | None = None) -> str:
    return given or os.environ.get("INITD_SOCKET") or DEFAULT_SOCKET


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
    finally:
        conn.close()
