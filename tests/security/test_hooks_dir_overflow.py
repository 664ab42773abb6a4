"""A hooks directory the agent fills past what initd reads (invariant 12: guards fail
closed). Once, a directory over 1,000 entries was refused whole: every guard in it was
off, in the running session too, and `initd emit pre_tool` of `rm -rf /` went from exit 2
to exit 0 with no result and no line logged. Now the first 1,000 names in order are
read, the rest are reported in every answer and the log, a blockable event is blocked
while a guard may be among them, and the image's hooks always run. The agent fills the
directory in one session and asks in the next: within a session, the guards are those of
its start (invariant 15), whatever the agent adds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.support.attack import Agent, agent_script, hook

GUARD = ('grep -q "rm -rf" && { echo "refusing rm -rf" >&2; exit 2; }; exit 0')
FILL_AND_FIRE = """
    import json, os, subprocess, sys
    hooks, prefix, count, event = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    for n in range(count):
        with open(os.path.join(hooks, f"{prefix}{n:05d}"), "w") as f:
            f.write("junk\\n")
    payload = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
    out = subprocess.run([sys.executable, "-m", "initd", "emit", event, "--data",
                          json.dumps(payload)], capture_output=True, text=True)
    print(json.dumps({"code": out.returncode, "answer": out.stdout}), flush=True)
    from tests.support.agent_side import call
    print(json.dumps(call("POST", "/v1/turn", {"trigger": "user"})[1]), flush=True)
"""
JUNK = 1500


def fire(boot, ws: Path, prefix: str, event: str = "pre_tool"):  # type: ignore[no-untyped-def]
    """The agent fills its hooks directory in one session, then asks in the next."""
    script = agent_script(FILL_AND_FIRE)
    filled = boot(sys.executable, script, str(ws / ".discobot" / "hooks"), prefix, str(JUNK),
                  "-")
    assert filled.wait(timeout=120) == 0, filled.stderr[-3000:]
    init = boot(sys.executable, script, str(ws / ".discobot" / "hooks"), prefix, "0", event)
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    fired, turn = (json.loads(line) for line in init.stdout_lines[-2:])
    return init, fired["code"], json.loads(fired["answer"]), turn


@pytest.mark.parametrize("prefix", ["zz-", "00-"], ids=["junk-after", "junk-before"])
def test_a_guard_in_an_overfull_hooks_directory_still_blocks(
        boot, agent: Agent, ws: Path, prefix: str) -> None:
    hook(ws / ".discobot" / "hooks", "10-guard.sh", GUARD, owner=agent, type="pre_tool")
    init, code, answer, turn = fire(boot, ws, prefix)
    assert code == 2, answer  # blocked: by the guard, or (not read) by the overflow
    assert answer["blocked"] is True
    [unread] = [r for r in answer["results"] if r["command"].startswith("the hooks in")]
    assert unread["status"] == "blocked" and "only the first 1000" in unread["error"]
    if prefix == "zz-":  # the guard sorts first: it was read, and it ran
        assert "refusing rm -rf" in answer["reason"]
    else:
        assert "a hook among the rest does not run" in answer["reason"]
    assert "hooks directory not read whole" in init.stderr
    assert any("only the first 1000" in problem for problem in turn["problems"]), turn


def test_the_images_hooks_run_whatever_the_workspace_holds(
        boot, agent: Agent, ws: Path, image: str) -> None:
    marker = ws / "image-hook-ran"
    Path(image).chmod(0o755)  # (the agent's service reads the image's event hooks)
    hook(Path(image), "10-image.sh", f"cat > {marker}", type="post_tool")
    _, code, answer, _ = fire(boot, ws, "00-", event="post_tool")
    assert code == 0, answer  # post_tool cannot be blocked: reported, not blocked
    statuses = {r["command"]: r["status"] for r in answer["results"]}
    assert statuses["10-image.sh"] == "ok", statuses
    assert any(c.startswith("the hooks in") and s == "error" for c, s in statuses.items())
    assert json.loads(marker.read_text())["tool_name"] == "Bash"
