"""An Idempotency-Key as initd takes one, and a request body's digest: one rule for the
client (``initd emit --id``, ``initd turn --id``) and the service (the header), so that a
key the service would refuse is never sent, and never sent as something else.

A key ends up in a request's head. A CR or LF in it would end the header line and start
one of the caller's choosing (``--id $'r2\\r\\nX: y'``: key ``r2`` and a forged header); an
empty one would be "no key" to a client that fills in its own. So a key is 1-200
printable ASCII characters without a space, checked before it is written anywhere.

Standard library only: the client that imports this runs in every exec probe.
"""

from __future__ import annotations

import hashlib
import json

KEY_LIMIT = 200  # characters of a key
PIECE = 64 * 1024  # characters of a long string hashed at a time


class BadKey(ValueError):
    pass


def check_key(key: str) -> str:
    """``key`` as a client may send it: 1-200 printable ASCII characters, no space."""
    if not 0 < len(key) <= KEY_LIMIT or not all(" " < c <= "~" for c in key):
        raise BadKey(f"Idempotency-Key: expected 1-{KEY_LIMIT} printable ASCII characters "
                     "without spaces")
    return key


def digest(body: object) -> str:
    """The sha256 of a request's body (the IETF idempotency-key draft's "fingerprint"): a
    key sent again with another body is another request, refused. Keys are taken sorted
    (the same object is the same body however its client ordered it), and the walk is a
    loop, not a recursion: a body nested as deep as the parser let it be has a digest of
    its own too, never one shared with every other body too deep to encode."""
    sha = hashlib.sha256()
    stack: list[object] = [body]
    while stack:
        item = stack.pop()
        if isinstance(item, _Mark):
            sha.update(item.text)
        elif isinstance(item, dict):
            sha.update(b"{")
            stack.append(_Mark(b"}"))
            for name in sorted(item, key=str, reverse=True):
                stack += [item[name], _Mark(_scalar(str(name)) + b":")]
        elif isinstance(item, list | tuple):
            sha.update(b"[")
            stack.append(_Mark(b"]"))
            for value in reversed(item):
                stack += [value, _Mark(b",")]
        elif isinstance(item, str) and len(item) > PIECE:  # (a Write's file: no copy of
            sha.update(b'"')  # it whole, its escapes are per character)
            for at in range(0, len(item), PIECE):
                sha.update(json.encoder.encode_basestring_ascii(item[at : at + PIECE])[1:-1]
                           .encode())
            sha.update(b'"')
        else:
            sha.update(_scalar(item))
    return sha.hexdigest()


class _Mark:
    """What the walk writes between values (a bracket, a key, a comma)."""

    def __init__(self, text: bytes) -> None:
        self.text = text


def _scalar(value: object) -> bytes:
    return json.dumps(value, default=str).encode(errors="surrogatepass")
