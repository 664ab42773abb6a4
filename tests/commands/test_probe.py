"""``initd ready``/``health`` as an exec probe runs them (commands/probe.py): against a
real Unix-socket server in a thread, in a real child process. The plain form imports
none of argparse, json, typing or signal; everything else reaches the full parser."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# What the probe must not import: each costs a probe more than its whole exchange.
HEAVY = ("argparse", "json", "typing", "signal", "initd.commands.options",
         "initd.commands.health", "initd.pid1.reaper")
PROBE = ("import sys\nfrom initd import cli\ntry:\n    code = cli.main(sys.argv[1:])\n"
         "finally:\n    sys.stdout.flush()\n"
         "    print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)\n"
         "raise SystemExit(code)\n")


class Server:
    """One answer for every request (or none, with ``hang``), on a Unix socket."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.answer = (200, b'{"ready": true, "reason": "port 8080 answers"}')
        self.hang = False
        self.requests: list[bytes] = []
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(16)
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
            self.requests.append(data)
            if self.hang:
                self.held.append(conn)
                continue
            code, body = self.answer
            reason = {200: "OK", 503: "Service Unavailable"}.get(code, "X")
            conn.sendall(f"HTTP/1.0 {code} {reason}\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
            conn.close()


@pytest.fixture
def server() -> Iterator[Server]:
    where = tempfile.mkdtemp(prefix="initd-probe-")
    serving = Server(os.path.join(where, "initd.sock"))
    yield serving
    serving.listener.shutdown(socket.SHUT_RDWR)  # (wakes the thread in accept(); close
    serving.listener.close()  # alone would leave it blocked there)
    for conn in serving.held:
        conn.close()
    os.unlink(serving.path)
    os.rmdir(where)


def probe(*args: str, stdout: int | None = None) -> tuple[int, str, str, set[str]]:
    out = subprocess.run([sys.executable, "-c", PROBE, *args], text=True, timeout=30,
                         stdout=subprocess.PIPE if stdout is None else stdout,
                         stderr=subprocess.PIPE)
    err, _, modules = out.stderr.rpartition("MODULES ")
    return out.returncode, out.stdout or "", err, set(modules.split())


@pytest.mark.parametrize("verb,path", [("ready", b"/v1/ready"), ("health", b"/v1/health")])
def test_a_passing_probe_prints_the_answer_and_imports_nothing_heavy(
        server: Server, verb: str, path: bytes) -> None:
    code, out, err, modules = probe(verb, "--socket", server.path)
    assert (code, out, err) == (0, '{"ready": true, "reason": "port 8080 answers"}\n', "")
    assert server.requests[0].startswith(b"GET " + path + b" HTTP/1.0\r\n")
    assert not modules & set(HEAVY), modules & set(HEAVY)


def test_both_spellings_of_the_options_take_the_fast_path(server: Server) -> None:
    code, out, _, modules = probe("ready", f"--socket={server.path}", "--timeout=0.5")
    assert code == 0 and out and not modules & set(HEAVY)
    code, out, _, modules = probe("ready", "--timeout", "3", "--socket", server.path)
    assert code == 0 and out and not modules & set(HEAVY)


def test_not_ready_exits_1_with_the_reason(server: Server) -> None:
    server.answer = (503, b'{"ready": false, "error": "the agent has not started yet"}')
    code, out, err, _ = probe("ready", "--socket", server.path)
    assert (code, out, err.strip()) == (1, "", "initd: the agent has not started yet")


@pytest.mark.slow
def test_no_answer_ends_within_the_timeout_once(server: Server) -> None:
    """A hanging service: one timeout, one line (no second try by the full parser)."""
    server.hang = True
    started = time.monotonic()
    code, out, err, _ = probe("ready", "--socket", server.path, "--timeout", "0.5")
    assert time.monotonic() - started >= 0.5  # the timeout was waited (a hang: probe's deadline)
    assert code == 125 and out == ""
    assert f"no answer from the hook service at {server.path} within 0.5s" in err
    assert len(server.requests) == 1  # one wait, not two: no second try


def test_no_service_there_is_one_line(tmp_path: Path) -> None:
    code, _, err, _ = probe("ready", "--socket", str(tmp_path / "none.sock"))
    assert code == 125 and err.startswith(f"initd: no hook service at {tmp_path}/none.sock")


@pytest.mark.parametrize("args,exit_code,expect", [
    (["--help"], 0, "usage: initd ready"),
    (["--timeout", "soon"], 125, "argument --timeout: invalid positive value: 'soon'"),
    (["--timeout", "0"], 125, "argument --timeout: invalid positive value: '0'"),
    (["--socket"], 125, "expected one argument"),
    (["--verbose"], 125, "unrecognized arguments"),
], ids=["help", "bad-timeout", "zero-timeout", "no-value", "unknown"])
def test_anything_but_the_plain_form_reaches_the_full_parser(
        server: Server, args: list[str], exit_code: int, expect: str) -> None:
    code, out, err, modules = probe("ready", *args)
    assert code == exit_code and expect in out + err
    assert "argparse" in modules
    assert not server.requests  # it never asked the service


def test_a_person_at_a_terminal_gets_the_answer_indented(server: Server) -> None:
    leader, follower = os.openpty()
    try:
        code, _, err, modules = probe("ready", "--socket", server.path, stdout=follower)
        os.close(follower)
        printed = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the terminal's other side is closed, all read
                break
            if not chunk:
                break
            printed += chunk
    finally:
        os.close(leader)
    assert code == 0, err
    assert printed.decode().replace("\r\n", "\n") == \
        '{\n  "ready": true,\n  "reason": "port 8080 answers"\n}\n'
    assert "json" in modules
