"""Which hooks an event's payload concerns (initd/events/filters.py): a stage, a tool list
in any case, nyzhi's file patterns (a ``{file}`` command once per file), Claude Code's
identical commands once per event, and a sequential hook's rewritten input."""

from __future__ import annotations

from initd.events import filters
from initd.events.model import Command, Shell
from initd.events.wire import Origin
from tests.support.calls import hook


def test_a_stage_only_its_own_events_or_those_of_no_stage() -> None:
    staged = hook(stage="work")
    assert filters.applies(staged, {"stage": "work"}) and filters.applies(staged, {})
    assert not filters.applies(staged, {"stage": "plan"})


def test_a_tool_list_in_any_case_and_under_any_name_the_formats_use() -> None:
    bash = hook(tool_name=("bash", "Git_Commit"))
    assert filters.applies(bash, {"tool_name": "Bash"})
    assert filters.applies(bash, {"toolName": "git_commit"})
    assert filters.applies(bash, {"tool": "BASH"})
    assert not filters.applies(bash, {"tool_name": "Write"})
    assert not filters.applies(bash, {})  # a tool list: no tool is not one of them
    assert not filters.applies(bash, {"tool_name": ["Bash"]})


def test_file_patterns() -> None:
    files = ["src/a.rs", "web/b.tsx", "docs/c.md"]
    assert filters.event_files(("*.rs",), files) == ["src/a.rs"]
    assert filters.event_files(("*.ts", "*.tsx"), files) == ["web/b.tsx"]
    assert filters.event_files(("docs/",), files) == ["docs/c.md"]  # a substring
    assert filters.event_files(("src/*.rs",), files) == ["src/a.rs"]  # a glob
    assert filters.event_files(("*.py",), files) == []
    assert filters.applies(hook(pattern=("*.rs",)), {"files": files})
    assert not filters.applies(hook(pattern=("*.py",)), {"files": files})


def test_the_payloads_files() -> None:
    assert filters.payload_files({"files": ["a", 1, "b"], "file": "c", "path": "a"}) == [
        "c", "a", "b"]
    assert filters.payload_files({"files": "a"}) == []
    assert filters.payload_files({}) == []


def test_a_file_command_runs_once_per_matching_file() -> None:
    each = hook(Shell("fmt {file}"), pattern=("*.rs",))
    assert filters.files_for(each, {"files": ["a.rs", "b.md", "c.rs"]}) == ["a.rs", "c.rs"]
    assert filters.files_for(each, {"files": []}) == [None]
    assert filters.files_for(hook(Shell("make")), {"files": ["a.rs"]}) == [None]


def test_identical_claude_commands_run_once_an_event() -> None:
    user = hook(Command("lint", "bash"), source="~/.claude/settings.json")
    project = hook(Command("lint", "bash"), source="/ws/.claude/settings.json")
    other = hook(Command("test", "bash"))
    script = hook(label="a script")
    kept = filters.deduplicated([user, project, other, script, script], {})
    assert kept == [user, other, script, script]  # (scripts are not Claude Code's)
    refused = filters.deduplicated([user, project], {}, refused=lambda h: h is user)
    assert refused == [user, project]  # a refused hook stands for no other


def test_a_sequential_hook_reads_the_input_its_predecessors_rewrote() -> None:
    payload = {"tool_input": {"command": "ls", "dir": "s"}}
    origin = Origin("gemini", "BeforeTool", {"tool_input": {"command": "ls"}})
    new, new_origin = filters.rewritten(payload, origin, {"command": "ls -la"})
    assert new == {"tool_input": {"command": "ls -la", "dir": "s"}}
    assert new_origin is not None and new_origin.payload == {"tool_input": {
        "command": "ls -la"}}
    assert filters.rewritten(payload, origin, None) == (payload, origin)
    assert filters.rewritten({"tool_input": "x"}, None, {"a": 1}) == ({"tool_input": "x"},
                                                                       None)
