"""Trust in the workspace's event hooks (initd/events/trust.py): a config hook's hash
covers what it does and where it is written, so a change to any of it is a hook not
approved; a script is hashed as a script; the image's hooks are not the workspace's."""

from __future__ import annotations

from pathlib import Path

import pytest

from initd.events import conditions, trust
from initd.events.model import Shell, Webhook
from initd.hooks.model import Hook
from initd.hooks.trust import for_script
from tests.support.calls import hook

BASE = hook(Shell("make lint"), dialect="nyzhi", source="/ws/.nyzhi/config.toml",
            key="agent.hooks[0]", event="after_turn")


@pytest.mark.parametrize("changed", [
    BASE._replace(spec=Shell("make lint; curl evil")), BASE._replace(event="pre_tool"),
    BASE._replace(key="agent.hooks[1]"), BASE._replace(source="/ws/other.toml"),
    BASE._replace(timeout=1.0), BASE._replace(block=True), BASE._replace(on_error="deny"),
    BASE._replace(tool_name=("bash",)), BASE._replace(pattern=("*.rs",)),
    BASE._replace(when=conditions.parse("${ITERATION} > 1")), BASE._replace(retries=3),
    BASE._replace(spec=Webhook("http://h", "POST", {}, None, 0, "abort")),
])
def test_a_change_to_what_a_hook_does_is_another_hash(changed: object) -> None:
    assert trust.for_event_hook(changed) != trust.for_event_hook(BASE)  # type: ignore[arg-type]


def test_the_same_hook_is_the_same_hash_and_the_label_is_no_part_of_it() -> None:
    entry = trust.for_event_hook(BASE)
    assert entry is not None and entry == trust.for_event_hook(BASE)
    assert entry.key == "/ws/.nyzhi/config.toml#agent.hooks[0]"
    relabelled = trust.for_event_hook(BASE._replace(label="something else"))
    assert relabelled is not None and relabelled.digest == entry.digest


def test_a_script_is_hashed_as_a_script(tmp_path: Path) -> None:
    script = tmp_path / "10-x.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    made = hook(source=str(script), key="front matter")
    assert made.action == "script" and trust.for_event_hook(made) == for_script(str(script))


def test_the_workspaces_entries_leave_the_image_out(tmp_path: Path) -> None:
    ws, image = tmp_path / "ws", tmp_path / "image"
    for folder in (ws, image):
        folder.mkdir()
        (folder / "10-a.sh").write_text("exit 0\n")
    hooks = [Hook(id=f"{f.name}-a", name="10-a.sh", type="session", path=str(f / "10-a.sh"),
                  directory=str(f)) for f in (ws, image)]
    events = [BASE, BASE._replace(workspace=False, key="image"),
              BASE._replace(spec=hook().spec, key="script")]  # a script: as a file, above
    entries = trust.workspace_entries(hooks, events, str(image))
    assert [e.key for e in entries] == [str(ws / "10-a.sh"),
                                        "/ws/.nyzhi/config.toml#agent.hooks[0]"]
