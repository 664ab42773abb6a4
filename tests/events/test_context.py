"""What the engine needs besides the event (initd/events/context.py): agent-pipelines'
secrets file, the agent's, read as .env and never over the real environment; and which
views of one call each hook reads."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

from initd.config import log
from initd.events.context import SECRETS_FILE, SECRETS_LIMIT, Firing, pipeline_secrets
from initd.events.wire import Origin
from initd.hooks import kinds
from tests.support.calls import hook


def secrets(home: Path) -> dict[str, str]:
    ctx = SimpleNamespace(agent=SimpleNamespace(home=str(home)), log=log.get())
    return pipeline_secrets(ctx)  # type: ignore[arg-type]


def write(home: Path, data: bytes) -> Path:
    path = home.joinpath(*SECRETS_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_the_secrets_file(tmp_path: Path) -> None:
    assert secrets(tmp_path) == {}
    write(tmp_path, b"# the webhooks\nSLACK_WEBHOOK=https://h/x\nexport A='b c'\nNONE\n")
    assert secrets(tmp_path) == {"SLACK_WEBHOOK": "https://h/x", "A": "b c"}


def test_a_secrets_file_that_cannot_be_read_is_a_line_not_a_crash(tmp_path: Path) -> None:
    path = write(tmp_path, b"A=\xff\n")
    assert secrets(tmp_path) == {}
    path.write_bytes(b"A=1\n" + b"#" * SECRETS_LIMIT)
    assert secrets(tmp_path) == {}
    path.unlink()
    os.mkfifo(path)  # (never opened blocking)
    assert secrets(tmp_path) == {}


def test_a_hook_of_the_agents_own_format_reads_the_call_once() -> None:
    each = ({"tool_name": "Write", "tool_input": {"file_path": "/b"}},)
    origin = Origin("codex", "PreToolUse", {"tool_name": "apply_patch"}, each=each)
    firing = Firing(kinds.BY_NAME["pre_tool"], {}, {}, {}, None, None, origin)
    first = {"tool_name": "Write", "tool_input": {"file_path": "/a"}}
    assert firing.views(hook(dialect="codex"), first) == [first]
    assert firing.views(hook(dialect="claude"), first) == [first, *each]
    assert firing._replace(origin=None).views(hook(dialect="claude"), first) == [first]
