"""``initd emit --from AGENT`` (initd/commands/emitfrom.py): the agent's hook input read
by its wire, put to the hook service, the answer in the agent's own words; what initd
cannot read is not allowed, and a guard the service cannot be asked about is blocked
(invariant 12). It imports the one wire it speaks."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from initd.commands.emitfrom import emit_from
from tests.support.fakeservice import json_answer, serving


def test_emit_from_imports_the_one_wire_it_speaks() -> None:
    """``initd emit --from AGENT`` runs on every event of the agent: it loads its agent's
    wire, never every format's loader (the service, not emit, reads hook files)."""
    import subprocess
    import sys

    from initd.events import sources

    for agent in sources.AGENTS:
        code = ("import sys, io\n"
                "from initd.commands.emitfrom import emit_from\n"
                "sys.stdin = io.TextIOWrapper(io.BytesIO(b'garbage'))\n"
                f"emit_from({agent!r}, None, '/nonexistent/sock', 'k')\n"
                "print(' '.join(sorted(m for m in sys.modules if m.startswith('initd'))))\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=60, check=True)
        loaded = out.stdout.split()
        assert f"initd.events.wires.{agent}" in loaded, out
        others = [m for m in loaded if m.startswith(("initd.events.dialects",
                                                     "initd.events.engine"))
                  or (m.startswith("initd.events.wires.") and m.endswith(
                      tuple(f".{a}" for a in sources.AGENTS if a != agent)))]
        assert others == [], others


def run(agent: str, stdin: bytes, sock: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = emit_from(agent, None, sock, "k")
    out = capsys.readouterr()
    return code, out.out, out.err


def test_what_the_agent_sent_that_initd_cannot_read_is_not_allowed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    none = str(tmp_path / "none.sock")
    assert run("claude", b"garbage", none, monkeypatch, capsys)[0] == 2
    assert run("claude", b"[1]", none, monkeypatch, capsys)[0] == 2
    assert run("claude", b'{"hook_event_name": "Nope"}', none, monkeypatch, capsys)[0] == 2
    code, _, err = run("nobody", b"{}", none, monkeypatch, capsys)
    assert code == 125 and "--from: no agent 'nobody'" in err


def test_a_guard_the_service_cannot_ask_is_blocked_in_the_agents_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    sent = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "ls"}}).encode()
    code, out, _ = run("claude", sent, str(tmp_path / "none.sock"), monkeypatch, capsys)
    assert code == 0 and json.loads(out)["hookSpecificOutput"][
        "permissionDecision"] == "deny"  # Claude Code's own deny
    stop = json.dumps({"hook_event_name": "Stop"}).encode()
    code, _, err = run("claude", stop, str(tmp_path / "none.sock"), monkeypatch, capsys)
    assert code == 1 and "could not be asked" in err  # a Stop is no guard: it stops


def test_the_services_answer_in_the_agents_words(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    sock = str(tmp_path / "s.sock")
    sent = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "rm -rf /"}}).encode()
    with serving(sock, lambda req: json_answer(200, {"blocked": True, "reason": "no rm"})
                 ) as seen:
        code, out, _ = run("claude", sent, sock, monkeypatch, capsys)
    assert code == 0  # (Claude Code reads the deny in the JSON)
    assert json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"] == "no rm"
    assert seen[0].startswith(b"POST /v1/events/PreToolUse?from=claude HTTP/1.0")
