"""``initd hooks list`` as it prints (initd/commands/listing.py): a row per hook, per event
hook and per devcontainer.json command, every name the agent wrote on one line, and the
same in JSON. The verb end to end: test_hooks.py and test_hooks_devcontainer.py."""

from __future__ import annotations

import json

import pytest

from initd.commands import listing
from initd.config.problems import Problem
from initd.devcontainer.config import parse
from initd.events.loading import Collected
from initd.events.model import Shell
from initd.hooks.discovery import Found
from initd.hooks.model import Hook
from initd.process import users
from tests.support.calls import hook as event_hook

FORGED = "10-x.sh\nerror: forged"
HOOK = Hook(id="x", name=FORGED, type="file", path=f"/ws/.discobot/hooks/{FORGED}",
            directory="/ws/.discobot/hooks", pattern="*.py", warnings=("w\nforged",))


def collected() -> Collected:
    made = Collected("nyzhi")
    made.hooks.append(event_hook(Shell("make lint"), dialect="nyzhi", event="after_turn",
                                 tool_name=("bash",), on_error="deny", block=True))
    made.problems.append(Problem("/ws/.nyzhi/config.toml", "agent.hooks[1].event", "bad"))
    return made


def test_a_table_every_name_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    found = Found(hooks=(HOOK,), problems=(Problem("/ws/README", None, "not a hook", "note"),))
    assert listing.list_hooks(found, collected(), as_json=False) == 0
    out = capsys.readouterr().out
    assert not any(line.startswith("error: forged") for line in out.splitlines())
    assert "10-x.sh\\nerror: forged" in out and "pattern=*.py" in out
    assert "warning: /ws/.discobot/hooks/10-x.sh\\nerror: forged: w\\nforged" in out
    assert "after_turn  nyzhi" in out and "block=true tool_name=bash on_error=deny" in out
    assert "note: /ws/README: not a hook" in out
    assert "error: /ws/.nyzhi/config.toml: agent.hooks[1].event: bad" in out


def test_the_same_in_json(capsys: pytest.CaptureFixture[str]) -> None:
    listing.list_hooks(Found(hooks=(HOOK,), problems=()), collected(), as_json=True)
    data = json.loads(capsys.readouterr().out)
    assert [h["name"] for h in data["hooks"]] == [FORGED]  # JSON escapes it itself
    assert data["events"][0]["toolName"] == ["bash"] and data["devcontainer"] is None
    assert data["problems"][0]["reason"].startswith("/ws/.nyzhi/config.toml: ")


def test_devcontainer_commands(capsys: pytest.CaptureFixture[str]) -> None:
    config = parse({"onCreateCommand": "npm ci", "postStartCommand": ["make", "dev"],
                    "postAttachCommand": "code ."}, "/ws/.devcontainer/devcontainer.json",
                   "/ws")
    agent = users.current()
    listing.list_devcontainer(config, agent, enabled=False)
    out = capsys.readouterr().out
    assert "once per container, before the agent" in out
    assert "every start, in the background" in out and "every start, once the agent is up" \
        in out
    assert "(array) make dev" in out and "note: devcontainer commands are off" in out
    view = listing.devcontainer_view(config, agent, True)
    assert [(c["stage"], c["once"], c["waited"]) for c in view["commands"]] == [  # type: ignore[attr-defined]
        ("onCreateCommand", True, True), ("postStartCommand", False, False),
        ("postAttachCommand", False, False)]
