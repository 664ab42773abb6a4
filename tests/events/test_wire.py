"""How an agent calls initd (events/wire.py, commands/emitfrom.py, commands/shim.py): the
Claude Code wire end to end against a real hook service, initd's own shim line in a file
it reads (the way in, never a hook: and never anything more than that line), and
``initd shim``'s merge into the user's own file, written by that user."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from initd.events import wire
from tests.conformance.claude_hooks_support import INITD, Session, command, group, hooks, q

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize(("line", "bridge"), [
    ("initd emit --from claude", True),
    ("/usr/local/bin/initd emit --from=gemini BeforeTool", True),
    ("python3 -m initd emit --from codex", True),
    ("initd emit pre_tool", False),  # initd's own event: a hook like any other
    ("initd emit --from claude; rm -rf /data", False),
    ("echo initd emit --from claude; rm -rf /data", False),
    ("initd emit --from claude > /tmp/x", False),
    ("initd emit --from claude && ./check.sh", False),
    ("sh -c 'initd emit --from claude'", False),
])
def test_only_the_exact_shim_line_is_the_bridge(line: str, bridge: bool) -> None:
    assert wire.is_shim(line) is bridge


def test_tool_names_and_fields_go_both_ways() -> None:
    names, fields = {"run_shell_command": "Bash"}, {"Bash": {"cmd": "command"}}
    theirs = {"tool_name": "run_shell_command", "tool_input": {"cmd": "ls", "dir": "/"},
              "extra": 1}
    ours = wire.tool(theirs, names, fields)
    assert ours == {"tool_name": "Bash", "tool_input": {"command": "ls", "dir": "/"},
                    "extra": 1}
    assert wire.untool(ours, names, fields) == theirs
    assert wire.tool({"tool_name": "other"}, names) == {"tool_name": "other"}


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    made = Session(tmp_path)
    try:
        yield made
    finally:
        made.stop()


def from_claude(session: Session | None, payload: dict[str, Any], sock: str | None = None
                ) -> subprocess.CompletedProcess[str]:
    target = sock if session is None else session.sock
    return subprocess.run([*INITD, "emit", "--from", "claude", "--socket", str(target)],
                          input=json.dumps(payload), capture_output=True, text=True,
                          timeout=100)


def bash(text: str) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": text}, "session_id": "s1", "cwd": "/w"}


def test_claude_codes_answers_for_each_kind_of_event(session: Session) -> None:
    deny = "echo 'no rm' >&2; exit 2"
    session.project(hooks(
        PreToolUse=group(command(deny, **{"if": "Bash(rm *)"}), matcher="Bash"),
        PermissionRequest=group(command("echo '" + json.dumps({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}) + "'")),
        PostToolUse=group(command("echo '" + json.dumps({"hookSpecificOutput": {
            "hookEventName": "PostToolUse", "updatedToolOutput": "redacted"}}) + "'")),
        TaskCreated=group(command("echo 'name it' >&2; exit 2")),
        Stop=group(command("echo 'tests fail' >&2; exit 2"))))
    session.start()
    denied = from_claude(session, bash("rm -rf /tmp/x"))
    assert (denied.returncode, denied.stderr) == (0, "")
    assert json.loads(denied.stdout) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "no rm"}}
    allowed = from_claude(session, bash("ls"))
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "", "")
    asked = from_claude(session, {**bash("ls"), "hook_event_name": "PermissionRequest"})
    assert json.loads(asked.stdout)["hookSpecificOutput"]["decision"] == {"behavior": "allow"}
    ran = from_claude(session, {**bash("ls"), "hook_event_name": "PostToolUse",
                                "tool_response": {"stdout": "secret"}})
    assert json.loads(ran.stdout)["hookSpecificOutput"]["updatedToolOutput"] == "redacted"
    task = from_claude(session, {"hook_event_name": "TaskCreated", "task_id": "t1"})
    assert (task.returncode, task.stderr) == (2, "name it\n")
    stop = from_claude(session, {"hook_event_name": "Stop", "stop_hook_active": False})
    assert json.loads(stop.stdout) == {"decision": "block", "reason": "tests fail"}


def test_what_cannot_be_asked_is_never_allowed(session: Session, tmp_path: Path) -> None:
    gone = str(tmp_path / "no.sock")
    denied = from_claude(None, bash("rm -rf /"), gone)
    said = json.loads(denied.stdout)["hookSpecificOutput"]
    assert denied.returncode == 0 and said["permissionDecision"] == "deny"
    assert "could not be asked" in said["permissionDecisionReason"]
    # a Stop's block would keep the agent working: an error, not a block
    stop = from_claude(None, {"hook_event_name": "Stop"}, gone)
    assert stop.returncode == 1 and stop.stdout == "" and "could not be asked" in stop.stderr
    session.start()
    for text in ("not json", "[1, 2]", json.dumps({"hook_event_name": "PreToolUsee"}),
                 json.dumps({"tool_name": "Bash"})):
        garbage = subprocess.run([*INITD, "emit", "--from", "claude", "--socket",
                                  session.sock], input=text, capture_output=True, text=True,
                                 timeout=100)
        assert garbage.returncode == 2 and "not allowed" in garbage.stderr, text


def test_the_shim_line_is_the_way_in_and_anything_more_is_a_hook(session: Session) -> None:
    """initd's own line in a file it reads is not run (it would send the event back to
    initd), and said once; the same line with more shell code on it runs as written."""
    canary = session.out / "ran"
    session.user(hooks(PreToolUse=[
        group(command("initd emit --from claude")),
        group(command(f"initd emit --from claude; touch {q(canary)}"))]))
    session.start()
    out = session.post("PreToolUse", bash("ls"))
    assert [r["command"] for r in out["results"]] == [
        f"initd emit --from claude; touch {q(canary)}"]
    assert canary.exists()
    listing = subprocess.run([*INITD, "hooks", "list", "--workspace", str(session.ws)],
                             capture_output=True, text=True, timeout=100,
                             env={**os.environ, "HOME": str(session.home)}, check=False)
    assert "initd emit --from: the agent sends its events to initd here" in (
        listing.stdout + listing.stderr)


def test_shim_prints_every_event_and_merges_into_the_users_file(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path)}
    shown = subprocess.run([*INITD, "shim", "claude"], capture_output=True, text=True,
                           env=env, check=True, timeout=100)
    config = json.loads(shown.stdout)
    # the hooks reference's revision of 2026-08-22 (Claude Code v2.1.240) lists 31 events:
    # DirectoryAdded and MessageDisplay besides the 29 (code.claude.com/docs/en/hooks, "Hook
    # lifecycle")
    assert len(config["hooks"]) == 31 and "PermissionRequest" in config["hooks"]
    mine = tmp_path / ".claude" / "settings.json"
    mine.parent.mkdir()
    own = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./mine.sh"}]}
    mine.write_text(json.dumps({"model": "opus", "hooks": {"PreToolUse": [own]}}))
    for _ in range(2):  # a second --write adds nothing
        subprocess.run([*INITD, "shim", "claude", "--write"], env=env, check=True,
                       capture_output=True, timeout=100)
    merged = json.loads(mine.read_text())
    assert merged["model"] == "opus"
    assert merged["hooks"]["PreToolUse"] == [own, config["hooks"]["PreToolUse"][0]]
    assert merged["hooks"]["Stop"] == config["hooks"]["Stop"]
    mine.write_text("{not json")
    broken = subprocess.run([*INITD, "shim", "claude", "--write"], env=env,
                            capture_output=True, text=True, timeout=100)
    assert broken.returncode != 0 and "not JSON initd can merge into" in broken.stderr
    assert mine.read_text() == "{not json"  # left as it is


def test_shim_writes_as_the_user_in_its_home(agent_user: pwd.struct_passwd) -> None:
    """Run as root with --user, the file is the user's own, written by the user: a link
    the user planted to a root file is refused, never read or written through."""
    home = Path(agent_user.pw_dir)
    target = home / ".claude" / "settings.json"
    subprocess.run(["rm", "-rf", str(home / ".claude")], check=True)
    made = subprocess.run([*INITD, "shim", "claude", "--write", "--user", agent_user.pw_name],
                          capture_output=True, text=True, timeout=100)
    assert made.returncode == 0, made.stderr
    assert target.stat().st_uid == agent_user.pw_uid
    assert "PreToolUse" in json.loads(target.read_text())["hooks"]
    canary = Path("/etc/initd-test-shim-canary.json")
    canary.write_text("{}")
    try:
        target.unlink()
        os.symlink(canary, target)
        os.lchown(target, agent_user.pw_uid, agent_user.pw_gid)
        planted = subprocess.run([*INITD, "shim", "claude", "--write", "--user",
                                  agent_user.pw_name], capture_output=True, text=True,
                                 timeout=100)
        assert planted.returncode != 0 and "a symbolic link" in planted.stderr
        assert canary.read_text() == "{}" and target.is_symlink()  # left as it is
    finally:
        canary.unlink()
        subprocess.run(["rm", "-rf", str(home / ".claude")], check=True)


def test_a_managed_file_of_the_shim_alone_turns_nothing_off_for_initd(session: Session
                                                                      ) -> None:
    """``allowManagedHooksOnly`` beside the shim tells Claude Code to run initd alone;
    initd runs the workspace's hooks itself (from the session's snapshot)."""
    session.managed({"allowManagedHooksOnly": True,
                     "hooks": {"PreToolUse": [group(command("initd emit --from claude"))]}})
    session.project(hooks(PreToolUse=group(command("echo 'no' >&2; exit 2"), matcher="Bash")))
    session.start()
    said = json.loads(from_claude(session, bash("rm -rf /data")).stdout)
    assert said["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_the_demo_image_shows_each_agents_line_where_it_writes() -> None:
    """images/demo/Containerfile shows, for each agent that calls initd, the line that
    writes its shim and the file it lands in: every agent's, each its wire's own path."""
    import re
    from pathlib import Path

    from initd.events import wires
    from initd.events.sources import AGENTS

    text = (Path(__file__).resolve().parents[2] / "images" / "demo" / "Containerfile"
            ).read_text()
    shown = re.findall(r"#   RUN initd shim (\w+) --write --user agent +# ~/(\S+)", text)
    assert [agent for agent, _ in shown] == list(AGENTS)
    for agent, path in shown:
        wire = wires.wire(agent)
        assert wire is not None and wire.shim("initd emit").path == path, agent
