"""``initd ready|health|status`` run by root (the kubelet's exec probe, an operator)
against a control socket the agent serves (invariant 8: the hook service is the agent's,
and so is what it answers). A hostile answer is one line of initd's and an exit code,
within ``--timeout``: it neither forges lines, nor reaches a terminal raw, nor holds the
probe past its timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.support.attack import GIT_ENV, Agent

INITD = [sys.executable, "-m", "initd"]
# The agent's server: one hostile answer per connection, by mode (argv[2]).
SERVER = r"""
import os, socket, sys, time
path, mode = sys.argv[1], sys.argv[2]
listener = socket.socket(socket.AF_UNIX)
listener.bind(path)
os.chmod(path, 0o777)
listener.listen(8)
print("serving", flush=True)
while True:
    conn, _ = listener.accept()
    conn.recv(65536)
    if mode == "dribble":  # a byte at a time, each well inside a socket timeout
        conn.sendall(b"HTTP/1.0 200 OK\r\n")
        try:
            while True:
                conn.sendall(b"X")
                time.sleep(0.2)
        except OSError:
            pass
    elif mode == "forge":
        body = b'{"error": "not ready\\ninitd: the agent is ready\\u001b[2J"}'
        conn.sendall(b"HTTP/1.0 503 Service Unavailable\r\nContent-Length: %d\r\n\r\n"
                     % len(body) + body)
    elif mode == "escapes":
        body = b'{"ready": true, "x": "\x1b]0;owned\x07\x1b[2J"}'
        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    elif mode == "huge":
        conn.sendall(b"HTTP/1.0 503 Service Unavailable\r\n\r\n")
        try:
            conn.sendall(b'{"error": "' + b"A" * (70 * 2**20))
        except OSError:
            pass
    elif mode == "garbage":
        conn.sendall(b"\x00\xff not http at all\r\n\r\n")
    elif mode == "superscript status":  # latin-1 "²": .isdigit() is true, int() raises
        conn.sendall(b"HTTP/1.0 \xb200 OK\r\nContent-Length: 2\r\n\r\n{}")
    elif mode == "superscript length":
        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: \xb2\r\n\r\n{}")
    elif mode == "5000 digits":
        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n{}")
    conn.close()
"""


@pytest.fixture
def serve(agent: Agent) -> Iterator[object]:
    procs: list[subprocess.Popen[str]] = []
    paths: list[str] = []

    def start(mode: str) -> str:
        path = os.path.join(agent.home, f"{mode}-{os.urandom(4).hex()}.sock")
        paths.append(path)
        env = {**GIT_ENV, "HOME": agent.home}
        proc = subprocess.Popen(["runuser", "-u", agent.name, "--", sys.executable, "-c",
                                 SERVER, path, mode], stdout=subprocess.PIPE, text=True,
                                env=env)
        procs.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "serving"
        return path

    yield start
    for proc in procs:
        proc.kill()
        proc.wait(10)
    for path in paths:
        if os.path.exists(path):
            os.unlink(path)


def as_root(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    out = subprocess.run([*INITD, *args], capture_output=True, text=True, timeout=60,
                         env=GIT_ENV)
    return out, time.monotonic() - started


@pytest.mark.slow
def test_a_dribbling_answer_ends_at_the_timeout(serve) -> None:  # type: ignore[no-untyped-def]
    """A socket timeout is per call: one byte every 0.2 s once held the probe for good."""
    path = serve("dribble")
    for verb in ("ready", "health"):
        out, _ = as_root(verb, "--socket", path, "--timeout", "1")
        assert out.returncode == 125 and out.stdout == ""
        assert out.stderr == f"initd: no answer from the hook service at {path} within 1s " \
                             "(starting, restarting, or busy)\n"
        # (the old client never returned: as_root's deadline)


@pytest.mark.parametrize("verb", ["ready", "status"])  # the probe's path and the parser's
def test_a_reason_cannot_forge_a_line_of_initds(serve, verb: str) -> None:  # type: ignore[no-untyped-def]
    out, _ = as_root(verb, "--socket", serve("forge"))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.splitlines() == [
        "initd: not ready\\ninitd: the agent is ready\\x1b[2J"]


def test_escapes_in_a_ready_answer_never_reach_the_output(serve) -> None:  # type: ignore[no-untyped-def]
    out, _ = as_root("ready", "--socket", serve("escapes"))
    assert out.returncode == 0  # (the status said ready: the agent's own business)
    assert out.stdout == "" and "\x1b" not in out.stderr
    assert out.stderr.startswith("initd: the answer is not shown")


@pytest.mark.parametrize("mode", ["huge", "garbage", "superscript status"])
def test_a_huge_or_garbled_answer_is_one_line(serve, mode: str) -> None:  # type: ignore[no-untyped-def]
    path = serve(mode)
    for verb in ("ready", "health"):
        out, _ = as_root(verb, "--socket", path, "--timeout", "30")
        assert out.returncode == 125 and out.stdout == ""
        assert len(out.stderr.splitlines()) == 1, out.stderr
        assert out.stderr.startswith(f"initd: the hook service at {path} stopped in the "
                                     "middle of its answer")


@pytest.mark.parametrize("mode", ["superscript length", "5000 digits"])
def test_a_length_that_is_not_a_number_is_no_traceback(serve, mode: str) -> None:  # type: ignore[no-untyped-def]
    """What is not 1-18 ASCII digits is no length: the answer ends with the connection,
    as HTTP/1.0's does, and root's probe reads it; it never raises."""
    path = serve(mode)
    for verb in ("ready", "health"):
        out, _ = as_root(verb, "--socket", path, "--timeout", "30")
        assert "Traceback" not in out.stderr and len(out.stderr.splitlines()) <= 1, out.stderr
        assert out.returncode in (0, 1), out
