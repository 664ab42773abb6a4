"""A hook's result that meets a full disk is kept and written when the disk allows; health
says "degraded" meanwhile. Once, such a result was never written: 30 s after space was
freed, status.json and /v1/status still said ``running`` for a hook that had ended, and
the next boot recorded it as interrupted.

A real full disk: a 1 MiB tmpfs as initd's state directory, which a session hook fills
(as ``apt-get`` filling a volume would), and the agent frees once health says degraded."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hooks.support import add_hook
from tests.support import tmpfs

AGENT = textwrap.dedent("""
    import json, os, sys, time
    from initd.commands import client
    state, sid = sys.argv[1], sys.argv[2]

    def health():
        try:
            return client.call("GET", "/v1/health", timeout=5)[1]
        except Exception:
            return {}

    def until(what, probe, seconds=60):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            got = probe()
            if got:
                return got
            time.sleep(0.1)
        print(f"never: {what}", flush=True)
        sys.exit(1)

    seen = until("degraded", lambda: health().get("status") == "degraded" and health())
    print("degraded:", json.dumps(seen["problems"]), flush=True)
    os.unlink(os.path.join(state, "filler"))  # the agent frees the disk

    def result():
        try:
            with open(os.path.join(state, sid, "hooks", "status.json")) as f:
                entry = json.load(f)["hooks"]["10-fill"]
        except (OSError, ValueError, KeyError):
            return None
        return entry if entry["lastResult"] != "running" else None
    print("recorded:", until("recorded", result)["lastResult"], flush=True)
    until("ok again", lambda: health().get("status") == "ok")
    print("ok again", flush=True)
""")


@pytest.fixture
def small_disk() -> Iterator[Path]:
    with tmpfs.mounted("size=1m,mode=1777", "initd-full-") as path:
        yield path


@pytest.mark.slow
def test_a_result_a_full_disk_refused_is_written_once_it_allows(
        initd, tmp_path: Path, small_disk: Path) -> None:
    repo = tmp_path / "ws"
    hooks = repo / ".discobot" / "hooks"
    hooks.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    add_hook(hooks, "10-fill.sh", f"head -c 4M /dev/zero > {small_disk}/filler; "
             "echo filled", type="session")
    sid = f"full-{uuid.uuid4().hex[:8]}"
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    init = initd(["--log-format", "json", "--workspace", str(repo), "--session-id", sid,
                  "--hooks-dir", str(tmp_path / "no-image"), "--state-dir", str(small_disk),
                  "--", sys.executable, str(script), str(small_disk), sid])
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    degraded, recorded, ok = init.stdout_lines[-3:]
    problems = json.loads(degraded.removeprefix("degraded: "))
    assert any("kept in memory, written when the disk allows" in p for p in problems)
    assert recorded == "recorded: success"  # the hook itself exited 0 (its echo)
    assert ok == "ok again"
    assert "hook status kept in memory: written when the disk allows" in init.stderr
