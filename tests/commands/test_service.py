"""``initd service`` (initd/commands/service.py): the session's guard snapshot taken from
the memory file root sealed (its failure said: every blockable event then blocked), and
the verb run by hand: it serves on its socket, says ready, and on SIGTERM stops and
removes the socket it made. Under initd's supervisor: tests/service/test_supervision.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from initd.commands import client
from initd.commands import service as verb
from initd.config import log
from initd.state import snapshot
from tests.hooks.support import forget_session, git_repo


def test_the_guards_from_roots_sealed_memory_file() -> None:
    assert verb.guards(None, log.get()) is None  # run by hand: it takes its own
    taken = snapshot.Snapshot(("/ws/.claude/settings.json",))
    fd = snapshot.made(taken.encode())
    got = verb.guards(fd, log.get())
    assert got is not None and got.covers("/ws/.claude/settings.json") and got.failed is None
    with pytest.raises(OSError):
        os.fstat(fd)  # closed: the service keeps no descriptor of root's
    failed = verb.guards(snapshot.made(snapshot.Snapshot(failed="cannot read").encode()),
                         log.get())
    assert failed is not None and failed.failed == "cannot read"


def test_the_parser_keeps_the_supervisors_options_out_of_help() -> None:
    text = verb.parser().format_help()
    assert "--socket" in text and "--listen-fd" not in text and "--guards-fd" not in text


def test_run_by_hand_it_serves_then_stops_and_removes_its_socket(tmp_path: Path) -> None:
    ws = git_repo(tmp_path / "ws")
    sock, sid = str(tmp_path / "s.sock"), f"svc-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen([sys.executable, "-m", "initd", "service", "--socket", sock,
                             "--workspace", str(ws), "--session-id", sid, "--hooks-dir",
                             str(ws / "no-image")], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == f"ready (socket: {sock})\n"
        code, health = client.call("GET", "/v1/health", sock=sock, timeout=60)
        assert code == 200 and health["pid"] == proc.pid
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
        assert not os.path.exists(sock)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        forget_session(sid)
