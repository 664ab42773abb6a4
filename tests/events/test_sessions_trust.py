"""Session records (AutoAgent's design) and trust in workspace hooks, for real."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from initd.events import records as sessions
from initd.hooks.trust import Trust, for_script
from initd.state import statefile
from tests.events.support import Workspace
from tests.hooks.support import ROOT_HOME, add_hook
from tests.support.harness import wait_for


def record(ws: Workspace) -> dict[str, object]:
    return json.loads(Path(ROOT_HOME, ".discobot", "sessions", f"{ws.sid}.json").read_text())


def lines(ws: Workspace) -> list[dict[str, object]]:
    path = Path(ROOT_HOME, ".discobot", "sessions", f"{ws.sid}.events.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_session_record_follows_its_events(ws: Workspace) -> None:
    ws.write(".autoagent/config.json", json.dumps({"hooks": {
        "PreExecutionStart": [{"command": "exit 0"}],
        "PreExecutionEnd": [{"command": "echo no tests >&2; exit 2"}],
        "PostExecutionEnd": [{"command": "exit 0"}]}}))
    ws.fire("PreExecutionStart", {"issueNumber": 1, "issueTitle": "Auth"})
    assert record(ws)["currentIssue"] == 1
    ws.fire("PreExecutionEnd", {"issueNumber": 1, "success": True})
    ws.fire("PostExecutionEnd", {"issueNumber": 1, "success": True})
    ws.fire("PreExecutionStart", {"issueNumber": 2})
    ws.fire("PostExecutionEnd", {"issueNumber": 2, "success": False})
    ws.fire("after_turn")  # no hooks: still a line
    rec = record(ws)
    assert (rec["id"], rec["status"], rec["workspace"]) == (ws.sid, "active", str(ws.path))
    assert (rec["issuesPlanned"], rec["issuesCompleted"], rec["issuesFailed"],
            rec["currentIssue"]) == ([1, 2], [1], [2], None)
    assert rec["running"] == {}
    got = lines(ws)
    assert [line["event"] for line in got] == [
        "pre_execution_start", "pre_execution_end", "post_execution_end",
        "pre_execution_start", "post_execution_end", "after_turn"]
    assert got[1]["blocked"] and got[1]["reason"] == "no tests"
    current = Path(ROOT_HOME, ".discobot", "sessions", "current")
    assert os.readlink(current) == f"{ws.sid}.json"
    [listed] = [s for s in sessions.listing(statefile.root(ROOT_HOME, None)) if s["id"] == ws.sid]
    assert (listed["events"], listed["blocked"]) == (6, 1)  # counted from the lines
    assert listed["lastEvent"]["event"] == "after_turn"
    assert ws.engine is not None
    ws.engine.shutdown("completed")
    assert (record(ws)["status"], bool(record(ws)["endTime"])) == ("completed", True)


KILLED_MID_WEBHOOK = """
import sys
from initd.events import wiring
from tests.hooks.support import hook_context
from pathlib import Path
engine = wiring.for_context(hook_context(Path(sys.argv[1]), sys.argv[2]), sys.argv[1] + "/none")
engine.fire("on_stage_complete", {"stage": "plan"})
"""


def test_a_crash_during_an_awaited_webhook_leaves_the_record_consistent(ws: Workspace
                                                                        ) -> None:
    ws.pipeline({"on_stage_complete": [{"type": "webhook", "url": "http://127.0.0.1:9/x",
                                        "retries": 1000, "retry_delay": 0.05,
                                        "await": True}]})
    proc = subprocess.Popen([sys.executable, "-c", KILLED_MID_WEBHOOK, str(ws.path), ws.sid],
                            cwd=Path(__file__).parent.parent.parent)
    path = Path(ROOT_HOME, ".discobot", "sessions", f"{ws.sid}.json")
    wait_for(lambda: path.exists() and json.loads(path.read_text()).get("running"),
             what="the event running")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    [running] = record(ws)["running"].values()  # type: ignore[union-attr]
    assert running["event"] == "stage_complete"
    ws.fire("after_turn")  # the next service: its engine opens the record
    rec = record(ws)
    assert rec["running"] == {} and rec["status"] == "active"
    got = lines(ws)
    assert got[0]["event"] == "stage_complete" and got[0]["interrupted"] is True
    assert got[1]["event"] == "after_turn"
    assert not list(path.parent.glob(f".{ws.sid}.json.*[0-9]"))  # no temp file left


# --- trust


@pytest.fixture
def trust_file(tmp_path: Path) -> Path:
    return tmp_path / "trust" / "trust.json"


def test_untrusted_workspace_hooks_do_not_run_until_approved(ws: Workspace,
                                                              trust_file: Path) -> None:
    from initd.events import dialects, trust, wiring
    from initd.hooks import discovery
    from tests.hooks.support import hook_context

    ws.nyzhi({"event": "pre_tool", "command": "touch ran", "on_error": "deny"})
    add_hook(ws.path / ".discobot" / "hooks", "10-guard.sh", "touch guard-ran",
             type="after_turn")
    ctx = hook_context(ws.path, ws.sid)._replace(
        trust=Trust(str(trust_file), enforce=True, image_dir=str(ws.path / "no-image")))
    ws.engine = wiring.for_context(ctx, str(ws.path / "no-image"))
    outcome = ws.fire("pre_tool")
    assert outcome["blocked"]  # on_error: deny: a hook that may not run blocks
    assert outcome["results"][0]["status"] == "blocked"
    assert "not trusted yet" in outcome["results"][0]["error"]
    assert not (ws.path / "ran").exists()
    assert "not trusted yet" in ws.fire("after_turn")["results"][0]["error"]

    found = dialects.load_all(str(ws.path), str(ws.path / "no-image"), ROOT_HOME)
    scripts = discovery.for_workspace(str(ws.path), str(ws.path / "no-image")).hooks
    approved = ctx.trust.approve(trust.workspace_entries(scripts, found.hooks,  # type: ignore[union-attr]
                                                          str(ws.path / "no-image")))
    assert sorted(state for _, state in approved) == ["new", "new"]
    assert not ws.fire("pre_tool")["blocked"] and (ws.path / "ran").exists()
    assert ws.fire("after_turn")["results"][0]["status"] == "ok"

    ws.nyzhi({"event": "pre_tool", "command": "touch ran-changed", "on_error": "deny"})
    ws.engine = wiring.for_context(ctx, str(ws.path / "no-image"))  # (its next start)
    outcome = ws.fire("pre_tool")
    assert "changed since it was trusted" in outcome["results"][0]["error"]
    assert not (ws.path / "ran-changed").exists()


def test_trust_applies_to_session_file_and_pre_commit_scripts_too(ws: Workspace,
                                                                  trust_file: Path) -> None:
    from initd.hooks import filehooks
    from initd.hooks.discovery import for_workspace
    from tests.hooks.support import hook_context

    add_hook(ws.path / ".discobot" / "hooks", "10-f.sh", "touch file-hook-ran", type="file",
             pattern="*.x")
    ws.write("a.x", "1\n")
    ctx = hook_context(ws.path, ws.sid)._replace(
        trust=Trust(str(trust_file), enforce=True, image_dir=str(ws.path / "no-image")))
    add_hook(ws.path / ".discobot" / "hooks", "20-image-like.sh", "touch second-ran",
             type="file", pattern="*.x")
    trust = ctx.trust
    assert trust is not None
    approved = for_script(str(ws.path / ".discobot" / "hooks" / "20-image-like.sh"))
    assert approved is not None
    trust.approve([approved])
    hooks = for_workspace(str(ws.path), str(ws.path / "no-image")).hooks
    evaluation = filehooks.evaluate(hooks, ctx)
    # the model cannot fix trust: no re-prompt; the refused hook stays pending, the
    # trusted one after it still runs
    assert evaluation.action == "none" and evaluation.pending == ("10-f",)
    assert "not trusted yet" in evaluation.ran[0].result.output()
    assert evaluation.ran[0].result.refused
    assert not (ws.path / "file-hook-ran").exists() and (ws.path / "second-ran").exists()


def test_the_image_hooks_are_trusted(ws: Workspace, tmp_path: Path, trust_file: Path) -> None:
    image = tmp_path / "image-hooks"
    add_hook(image, "10-img.sh", "echo image", type="after_turn")
    trust = Trust(str(trust_file), enforce=True, image_dir=str(image))
    from initd.events import wiring
    from tests.hooks.support import hook_context

    ctx = hook_context(ws.path, ws.sid)._replace(trust=trust)
    ws.engine = wiring.for_context(ctx, str(image))
    assert ws.fire("after_turn")["results"][0]["stdout"] == "image\n"
