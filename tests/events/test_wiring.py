"""An engine for a hook context (initd/events/wiring.py): the session's record opened,
the events' state directory made, and the hooks' environment: agent-pipelines' secrets
under the real environment, initd's secrets removed."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.events import wiring
from initd.events.context import SECRETS_FILE
from tests.hooks.support import forget_session, git_repo, hook_context


@pytest.fixture
def sid() -> Iterator[str]:
    made = f"wiring-{uuid.uuid4().hex[:8]}"
    yield made
    forget_session(made)


def test_the_engine_of_a_context(tmp_path: Path, sid: str,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ws = git_repo(tmp_path / "ws")
    ctx = hook_context(ws, sid)
    home = Path(ctx.agent.home)
    secrets = home.joinpath(*SECRETS_FILE)
    secrets.parent.mkdir(parents=True, exist_ok=True)
    secrets.write_text("SLACK_WEBHOOK=https://from-file\nHOME=/forged\n")
    monkeypatch.setenv("INITD_TEST_SECRET", "hidden")
    engine = wiring.for_context(ctx._replace(secrets=("INITD_TEST_SECRET",)), str(ws / "no"))
    try:
        env = engine.ctx.env
        assert env["SLACK_WEBHOOK"] == "https://from-file"
        assert env["HOME"] == ctx.agent.home  # the real environment wins
        assert "INITD_TEST_SECRET" not in env
        assert engine.ctx.account is None  # the service is the agent: nothing to drop
        events = Path(engine.ctx.state_dir)
        assert events.is_dir() and events.parts[-2:] == (sid, "events")
        record = json.loads((home / ".discobot" / "sessions" / f"{sid}.json").read_text())
        assert record["status"] == "active" and record["workspace"] == str(ws)
    finally:
        engine.shutdown()
        secrets.unlink()


def test_a_dead_runners_events_are_said_interrupted(tmp_path: Path, sid: str) -> None:
    ws = git_repo(tmp_path / "ws")
    ctx = hook_context(ws, sid)
    wiring.for_context(ctx, str(ws / "no")).shutdown()
    path = Path(ctx.agent.home, ".discobot", "sessions", f"{sid}.json")
    data = json.loads(path.read_text())
    data["running"] = {"x": {"event": "stop", "runner": [os.getpid(), -1]}}
    path.write_text(json.dumps(data))
    wiring.for_context(ctx, str(ws / "no")).shutdown()
    lines = Path(ctx.agent.home, ".discobot", "sessions", f"{sid}.events.jsonl").read_text()
    assert '"interrupted": true' in lines
