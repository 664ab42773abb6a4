"""An event's payload as large as the API takes, through a real ``initd service`` on a
real socket (initd/service/app.py: the body spooled, read a piece at a time, given to
every hook): each hook gets the whole payload, its long string byte for byte as the
client sent it, whatever it holds at the pieces' cuts; a payload in an agent's own shape
(``?from=claude``) too; and the service's memory stays within a generous bound of the
payload (the tight goal, 2x, is measured by make bench: bench/payload.py)."""

from __future__ import annotations

import hashlib
import http.server
import json
import signal
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hooks.support import forget_session, git_repo
from tests.service import support
from tests.service.support import start

MiB = 2**20


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[tuple[str, Path, int]]:
    """A service whose workspace has a Claude Code PreToolUse hook and a nyzhi pre_tool
    hook, each keeping what it read on stdin; (its socket, where they keep it, its pid)."""
    repo = git_repo(tmp_path / "ws")
    kept = tmp_path / "kept"
    kept.mkdir()
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Write", "hooks": [{"type": "command",
                                        "command": f"cat > {kept}/claude.json"}]}]}}))
    (repo / ".nyzhi").mkdir()
    (repo / ".nyzhi" / "config.toml").write_text(
        f'[[agent.hooks]]\nevent = "pre_tool"\ncommand = "cat > {kept}/nyzhi.json"\n')
    sid = f"app-{uuid.uuid4().hex[:8]}"
    sock = str(tmp_path / "initd.sock")
    proc = start(sock, str(repo), sid)
    yield sock, kept, proc.pid
    proc.send_signal(signal.SIGTERM)
    proc.wait(10)
    forget_session(sid)



def post(sock: str, path: str, body: bytes) -> tuple[int, Any]:
    return support.post(sock, path, body, timeout=120)  # (16 MiB through two guards)


def kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise LookupError(key)


def text_of(size: int, unit: str) -> str:
    return (unit * (size // len(unit.encode("utf-8", "surrogatepass")) + 1))[:size]


def literal(content: str, ascii_only: bool) -> bytes:
    return json.dumps(content, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


def write_event(content: str, ascii_only: bool = True, **more: Any) -> bytes:
    return (b'{"tool_name": "Write", "tool_input": {"file_path": "src/a.py", "content": '
            + literal(content, ascii_only) + b"}" + b"".join(
                b', "%s": %s' % (k.encode(), json.dumps(v).encode()) for k, v in more.items())
            + b"}")


def each_got(kept: Path, content: str, raw: bytes) -> None:
    def sha(text: str) -> str:  # (a failure's message: no 16 MiB in it)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    for name in ("claude.json", "nyzhi.json"):
        stdin = (kept / name).read_bytes()
        assert sha(json.loads(stdin)["tool_input"]["content"]) == sha(content), name
        assert raw in stdin, name  # the client's own bytes, copied


@pytest.mark.slow
def test_a_16_mib_write_reaches_each_guard_whole_within_a_bound(
        guarded: tuple[str, Path, int]) -> None:
    sock, kept, pid = guarded
    code, _ = post(sock, "/v1/events/pre_tool", write_event("warm"))
    assert code == 200
    idle = kib(pid, "VmRSS")
    unit = '\tsay("é", n)  # \\ a line\n'
    content = unit * ((16 * MiB - 200) // (len(literal(unit, True)) - 2))
    body = write_event(content)
    assert 15 * MiB < len(body) <= 16 * MiB
    code, out = post(sock, "/v1/events/pre_tool", body)
    assert code == 200 and [r["status"] for r in out["results"]] == ["ok", "ok"], out
    each_got(kept, content, literal(content, True))
    cost = kib(pid, "VmHWM") - idle
    assert cost < 4 * len(body) // 1024, f"{cost} KiB above idle for {len(body)} bytes"


UNITS = ["é\"\\\n\t\U0001f600 ", "\\u" * 5 + "\ud83d\ude00", "x" * 300 + "\\\\\\" + '"',
         "\u20ac" * 7 + "\n"]


@pytest.mark.slow
@pytest.mark.parametrize("ascii_only", [True, False])
def test_what_a_long_string_holds_at_the_cuts_reaches_the_hooks(
        guarded: tuple[str, Path, int], ascii_only: bool) -> None:
    """Escapes, surrogate pairs and UTF-8 of every length, at every offset of the
    reading's and the writing's pieces (256 KiB and 64 Ki characters)."""
    sock, kept, _ = guarded
    content = "".join(text_of(700_000 + n * 997, unit) for n, unit in enumerate(UNITS))
    body = write_event(content, ascii_only)
    code, out = post(sock, "/v1/events/pre_tool", body)
    assert code == 200 and [r["status"] for r in out["results"]] == ["ok", "ok"], out
    meant = json.loads(body)["tool_input"]["content"]  # (escaped halves make one pair)
    # (raw surrogates' UTF-8 is no UTF-8: a hook reads them as JSON escapes, a pair of
    # which is one character, as every JSON reader makes it)
    meant = json.loads(json.dumps(meant))
    each_got(kept, meant, literal(content, True))  # (not ASCII: as json.dumps writes it)


@pytest.mark.slow
def test_an_http_hook_is_sent_the_payload_whole(tmp_path: Path) -> None:
    """A Claude Code ``type: http`` hook: its POST body is the stdin a command hook reads,
    sent a piece at a time with its Content-Length."""
    got: dict[str, Any] = {}

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            got.update(length=length, body=self.rfile.read(length))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    repo = git_repo(tmp_path / "ws")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Write", "hooks": [{"type": "http", "url": "http://127.0.0.1:"
                                        f"{server.server_address[1]}/hook"}]}]}}))
    sid = f"app-{uuid.uuid4().hex[:8]}"
    proc = start(str(tmp_path / "s.sock"), str(repo), sid)
    try:
        content = text_of(3 * MiB, "é\"\\\nline ")
        code, out = post(str(tmp_path / "s.sock"), "/v1/events/pre_tool",
                         write_event(content, False))
        assert code == 200 and [r["status"] for r in out["results"]] == ["ok"], out
        assert got["length"] == len(got["body"]) > 3 * MiB
        assert json.loads(got["body"])["tool_input"]["content"] == content
        assert literal(content, True) in got["body"]  # (not ASCII: as json.dumps writes it)
    finally:
        server.shutdown()
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
        forget_session(sid)


@pytest.mark.slow
def test_an_agents_own_payload_reaches_the_hooks_whole(
        guarded: tuple[str, Path, int]) -> None:
    sock, kept, _ = guarded
    content = text_of(3 * MiB, "é\"\\\nline ")
    body = write_event(content, False, hook_event_name="PreToolUse", session_id="s1",
                       cwd="/ws", transcript_path="/t.jsonl")
    code, out = post(sock, "/v1/events/-?from=claude", body)
    assert code == 200 and [r["status"] for r in out["results"]] == ["ok", "ok"], out
    each_got(kept, content, literal(content, True))  # (not ASCII: as json.dumps writes it)
