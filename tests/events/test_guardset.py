"""events/guardset.py and events/sources.py: the snapshot covers every file each format
loads from the agent's trees (one table), loading from it is loading from the files as
they were, and a discobot script is compared with it before it runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from initd.events import dialects, guardset, sources
from initd.events.dialect import Where
from initd.hooks import discovery, workspacefiles
from tests.hooks.support import add_hook

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def where(tmp_path: Path) -> Where:
    for name in ("ws", "home", "image"):
        (tmp_path / name).mkdir()
    return Where(str(tmp_path / "ws"), str(tmp_path / "image"), str(tmp_path / "home"))


def every_format(where: Where) -> None:
    """A file of each format, in the workspace and in the home, and two discobot hooks."""
    ws, home = Path(where.workspace), Path(where.home)
    add_hook(ws / ".discobot" / "hooks", "10-guard.sh", "exit 2", type="pre_tool")
    add_hook(ws / ".discobot" / "hooks", "20-lint.sh", "exit 0", type="file", pattern="*.py")
    add_hook(ws / "scripts", "guard.sh", "exit 2", type="pre_tool")  # a hook as a link to it
    (ws / ".discobot" / "hooks" / "30-linked.sh").symlink_to("../../scripts/guard.sh")
    (ws / ".discobot" / "hooks" / "40-outside.sh").symlink_to("/bin/true")  # refused
    shutil.copy(FIXTURES / "iteratr.hooks.yml", ws / ".iteratr.hooks.yml")
    for base in (ws / ".nyzhi" / "config.toml", home / ".config" / "nyzhi" / "config.toml"):
        base.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / "nyzhi.toml", base)
    for base in (ws / ".autoagent", home / ".autoagent"):
        base.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / "autoagent.json", base / "config.json")
    shutil.copy(FIXTURES / "pipeline.yaml", ws / "pipeline.yaml")
    (home / ".config" / "agent-pipelines").mkdir(parents=True)
    shutil.copy(FIXTURES / "global-hooks.yaml", home / ".config" / "agent-pipelines" / "hooks.yaml")
    for base in (ws, home):
        (base / ".claude").mkdir()
        (base / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 2"}]}]}}))


def test_every_file_a_format_loads_from_the_agents_trees_is_in_the_table(
        where: Where) -> None:
    every_format(where)
    snapshot = guardset.take(where.workspace, where.home)
    for dialect in dialects.DIALECTS.values():
        for path in dialect.files(where):
            mine = path.startswith((where.workspace + "/", where.home + "/"))
            assert snapshot.covers(path) == mine, (dialect.name, path)
    assert set(sources.SOURCES) == set(dialects.DIALECTS)


def test_loading_from_the_snapshot_is_loading_the_files_as_they_were(where: Where) -> None:
    every_format(where)
    before = dialects.load_all(*where)
    snapshot = guardset.take(where.workspace, where.home)
    for path in Path(where.workspace).rglob("*"):  # the agent empties every file (never
        if path.is_file() and not path.is_symlink():  # through a link: 40-outside.sh
            path.write_text("")  # names /bin/true, and this test runs as root)
    shutil.rmtree(Path(where.home) / ".claude")
    with workspacefiles.replaying(snapshot):
        after = dialects.load_all(*where)
        hooks = discovery.for_workspace(where.workspace, where.image_dir)
    assert after.hooks == before.hooks and after.problems == before.problems
    assert [(h.id, h.path) for h in hooks.hooks if h.id == "30-linked"] == [
        ("30-linked", str(Path(where.workspace, "scripts", "guard.sh")))]  # (runs the file)
    assert any("40-outside.sh" in p.path and "outside the workspace" in p.reason
               for p in hooks.problems)
    assert dialects.load_all(*where).hooks != before.hooks  # (the files as they are now)


def test_a_script_is_compared_with_the_snapshot_before_it_runs(where: Where) -> None:
    ws = Path(where.workspace)
    path = add_hook(ws / ".discobot" / "hooks", "10-guard.sh", "exit 2", type="pre_tool")
    snapshot = guardset.take(where.workspace, where.home)
    assert guardset.changed(str(path), snapshot) is None
    path.touch()  # a new mtime alone is no change
    assert guardset.changed(str(path), snapshot) is None
    text = path.read_text()
    path.write_text(text.replace("exit 2", "exit 0"))
    assert guardset.changed(str(path), snapshot) == "changed"
    path.write_text(text + "\n" * 100_000)  # the head as it was, the body longer
    assert guardset.changed(str(path), snapshot) == "changed"
    path.unlink()
    assert guardset.changed(str(path), snapshot) == "cannot be read now (No such file or directory)"


def test_a_home_that_is_no_home_is_not_snapshotted(where: Where) -> None:
    configs, directories = sources.agents(where.workspace, "/")
    assert all(path.startswith(where.workspace) for path in (*configs, *directories))
    assert directories == [str(Path(where.workspace, ".discobot", "hooks")),
                           str(Path(where.workspace, ".github", "hooks"))]  # (VS Code's)


def test_nothing_there_is_said_with_lstats_alone(where: Where) -> None:
    assert not sources.any_present(where.workspace, where.home)
    (Path(where.home) / ".autoagent").mkdir()
    (Path(where.home) / ".autoagent" / "config.json").symlink_to("/nowhere")
    assert sources.any_present(where.workspace, where.home)  # (a dangling link counts)
