"""discobot's scripts on events (initd/events/dialects/discobot.py): what front matter makes
an event hook, and what is the events loader's to report."""

from __future__ import annotations

from pathlib import Path

import pytest

from initd.config.problems import Problem
from initd.events import dialects
from initd.events.dialects.discobot import standing
from initd.events.model import BLOCKABLE
from initd.hooks.discovery import Broken
from tests.events.support import errors, home, loader_workspace
from tests.hooks.support import add_hook


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return loader_workspace(tmp_path)


def test_discobot_scripts_on_events(ws: Path) -> None:
    hooks = ws / ".discobot" / "hooks"
    add_hook(hooks, "10-guard.sh", "exit 0", type="pre_tool", block=True,
             tool_name="bash,git_commit", when="${ITERATION} > 1", on_error="deny")
    add_hook(hooks, "20-camel.sh", "exit 0", type="PreToolUse")
    add_hook(hooks, "30-root.sh", "exit 0", type="after_turn", run_as="root")
    add_hook(hooks, "40-typo.sh", "exit 0", type="after_tern")
    add_hook(hooks, "50-badwhen.sh", "exit 0", type="after_turn", when="${A} ==")
    found = dialects.load_all(str(ws), str(ws / "no-image"), home(ws))
    assert [(h.event, h.label, h.block, h.tool_name, h.on_error, h.action) for h in
            found.hooks] == [
        ("pre_tool", "10-guard.sh", True, ("bash", "git_commit"), "deny", "script"),
        ("pre_tool", "20-camel.sh", False, (), "allow", "script")]
    assert found.hooks[0].when is not None and found.hooks[0].timeout == 60.0
    # the front matter itself is discovery's to report (initd hooks check shows it once)
    from initd.hooks import discovery

    reasons = [p.reason for p in discovery.for_workspace(str(ws), str(ws / "none")).problems]
    assert any("run_as: root is for blocking session hooks; a hook on an event "
               "(after_turn) runs as the agent user" in r for r in reasons)
    assert any("type: expected one of session, file, pre-commit or an event" in r
               and "'after_tern'" in r for r in reasons)
    # the event fields are the events loader's
    [bad_when] = errors(found)
    assert "front matter of hook '50-badwhen.sh'.when: bad condition '${A} =='" in bad_when
WS_FILE, IMAGE_FILE = "/ws/.discobot/hooks/10-x.sh", "/etc/initd/hooks.d/10-x.sh"


@pytest.mark.parametrize(("broken", "on"), [
    (Broken(Problem(WS_FILE, None, "", "error"), "pre_tool"), "pre_tool"),
    (Broken(Problem(WS_FILE, None, "", "error"), "PreToolUse"), "pre_tool"),  # an alias
    (Broken(Problem(WS_FILE, None, "", "error"), "session"), None),  # plainly no event hook
    (Broken(Problem(WS_FILE, None, "", "error"), "pre-commit"), None),
    (Broken(Problem(WS_FILE, None, "", "error"), "pre_tol"), None),  # no event: check says so
    (Broken(Problem(WS_FILE, None, "", "error")), BLOCKABLE),  # no type, or did not parse
    (Broken(Problem(WS_FILE, None, "", "error"), ["pre_tool"]), BLOCKABLE),
    (Broken(Problem(WS_FILE, None, "", "error"), read=False), BLOCKABLE),
    (Broken(Problem(IMAGE_FILE, None, "", "error"), read=False), None),  # root's own, unreadable
    (Broken(Problem(IMAGE_FILE, None, "", "error")), BLOCKABLE),
])
def test_what_a_broken_hook_file_stands_in_on(broken: Broken, on: str | None) -> None:
    assert standing(broken, "/etc/initd/hooks.d") == on
