"""The dialects together (initd/events/dialects/__init__.py): loaded in the order of
sources.py's table, the cache that keeps the session's snapshot, and what every dialect's
field checker refuses. Each dialect's own loader is tests/events/dialects/test_NAME.py's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from initd.events import dialects
from tests.events.support import FIXTURES, errors, home, loader_workspace, put
from tests.hooks.support import add_hook


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return loader_workspace(tmp_path)


def test_load_all_in_order_and_the_cache_keeps_the_sessions_snapshot(ws: Path) -> None:
    """The cache loads the agent's files as the guard snapshot has them (taken when it is
    made: the service's start), however they change afterwards; the next start (a new
    cache) sees the change (invariant 15)."""
    add_hook(ws / ".discobot" / "hooks", "10-a.sh", "exit 0", type="after_turn")
    shutil.copy(FIXTURES / "iteratr.hooks.yml", ws / ".iteratr.hooks.yml")
    put(ws / ".nyzhi" / "config.toml", '[[agent.hooks]]\nevent = "after_turn"\ncommand = "n"\n')
    put(ws / ".autoagent" / "config.json", '{"hooks": {"Stop": [{"command": "a"}]}}')
    shutil.copy(FIXTURES / "loop.yaml", ws / "loop.yaml")
    cache = dialects.Cache(str(ws), str(ws / "no-image"), home(ws))
    first = cache.get()
    assert [h.dialect for h in first.hooks] == ["discobot", "iteratr", "iteratr", "nyzhi",
                                                "autoagent", "pipelines"]
    assert cache.get() is first  # nothing changed: not loaded again
    put(ws / ".nyzhi" / "config.toml", '[[agent.hooks]]\nevent = "after_turn"\ncommand = "m"\n'
        '[[agent.hooks]]\nevent = "after_turn"\ncommand = "o"\n')
    assert [h.label for h in cache.get().hooks if h.dialect == "nyzhi"] == ["n"]
    (ws / ".discobot" / "hooks" / "10-a.sh").unlink()
    assert "discobot" in {h.dialect for h in cache.get().hooks}
    again = dialects.Cache(str(ws), str(ws / "no-image"), home(ws)).get()  # the next start
    assert [h.label for h in again.hooks if h.dialect == "nyzhi"] == ["m", "o"]
    assert "discobot" not in {h.dialect for h in again.hooks}


# --- what every dialect's field checker refuses


BIG = 10**400  # a whole number TOML, JSON and YAML all read, too big for a float


@pytest.mark.parametrize(("file", "text", "key"), [
    (".nyzhi/config.toml", f'[[agent.hooks]]\nevent = "after_turn"\ncommand = "true"\n'
                           f"timeout = {BIG}\n", "agent.hooks[0].timeout"),
    (".autoagent/config.json", json.dumps({"hooks": {"PreExecutionStart": [
        {"type": "command", "command": "true", "timeout": BIG}]}}),
     "hooks.PreExecutionStart[0].timeout"),
    (".iteratr.hooks.yml", f"version: 1\nhooks:\n  pre_iteration:\n"
                           f"    - command: 'true'\n      timeout: {BIG}\n",
     "hooks.pre_iteration[0].timeout"),
], ids=["nyzhi", "autoagent", "iteratr"])
def test_a_number_too_big_for_a_float_is_that_hooks_error(ws: Path, file: str, text: str,
                                                          key: str) -> None:
    """Each format allows an integer of any size; before one field checker served every
    format, the dialects' converted it to a float unguarded, and OverflowError ended
    `initd hooks check` with a traceback and no line naming the file."""
    put(ws / file, text)
    found = dialects.load_all(str(ws), str(ws / "no-image"), home(ws))
    assert found.hooks == []
    [error] = errors(found)
    assert error.startswith(f"{ws / file}: {key}: expected a number > 0, got ")


def test_the_one_list_of_formats_is_sources_table() -> None:
    """sources.py's table is the registry (CONTRIBUTING, "How to add a dialect"): a format
    is its row, its loader (dialects/NAME.py) and, when its agent calls initd, its wire
    (wires/NAME.py); DIALECTS runs them in the table's order, and every agent named in
    AGENTS has the wire its dialect answers with."""
    from initd.events import sources, wires

    assert list(dialects.DIALECTS) == list(sources.SOURCES)
    assert all(d.name == name for name, d in dialects.DIALECTS.items())
    assert list(dialects.WIRES) == [n for n in sources.SOURCES if n in sources.AGENTS]
    assert set(dialects.WIRES) == set(sources.AGENTS)
    for name in sources.AGENTS:
        assert wires.wire(name) is dialects.DIALECTS[name].wire
        assert wires.wire(name).agent == name  # type: ignore[union-attr]
    for name in ("discobot", "", "../claude", "wires", "__init__"):
        assert wires.wire(name) is None
