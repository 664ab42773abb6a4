"""devcontainer.json's commands and stages as records (initd/devcontainer/model.py): what
``waitFor`` waits for, and ids that keep apart keys that clean to one name."""

from __future__ import annotations

from initd.devcontainer.config import parse
from initd.devcontainer.model import STAGES, Config


def test_keys_that_clean_to_one_name_keep_apart() -> None:
    config = parse({"postCreateCommand": {"a.b": "true", "a-b": "true", "A B": "x"}},
                   "/ws/.devcontainer/devcontainer.json", "/ws")
    hooks = [c.hook(config) for c in config.stages[0].commands]
    assert len({h.id for h in hooks}) == 3
    assert all(h.type == "devcontainer" and h.path == config.path for h in hooks)


def test_wait_for() -> None:
    def waited(wait_for: str) -> list[bool]:
        config = Config("f", "/ws", wait_for=wait_for)
        return [config.waited(s) for s in STAGES]
    # (the fifth, postAttachCommand, is never waited for: it runs once the agent is up)
    assert waited("onCreateCommand") == [True, False, False, False, False]
    assert waited("postStartCommand") == [True] * 4 + [False]
    assert waited("initializeCommand") == [False] * 5  # (it is the host's: nothing waits)
