"""What every dialect loader shares (initd/events/loading.py): a config file read in its
format or a LoadError naming it (never a FIFO, a link's target past the door, a file
past CONFIG_LIMIT, an alias bomb), an event hook's two own fields, and Collected, where
one broken entry is its problem and a stand-in on its event while the others load."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from initd.config.problems import LoadError
from initd.events import loading, model
from initd.events.sources import CONFIG_LIMIT
from initd.hooks import kinds
from tests.support.calls import hook


def put(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(("fmt", "text", "data"), [
    ("yaml", "a: [1, 2]\n", {"a": [1, 2]}), ("toml", "a = 1\n[b]\nc = 'x'\n",
                                             {"a": 1, "b": {"c": "x"}}),
    ("json", '{"a": null}', {"a": None}), ("jsonc", '{"a": 1, // c\n}', {"a": 1}),
    ("yaml", "", None),
])
def test_each_format(tmp_path: Path, fmt: str, text: str, data: object) -> None:
    assert loading.read(put(tmp_path, f"f.{fmt}", text), fmt) == data


def test_no_file_is_none(tmp_path: Path) -> None:
    assert loading.read(str(tmp_path / "none.json"), "json") is None
    assert loading.read(str(tmp_path / "none" / "deeper.json"), "json") is None


@pytest.mark.parametrize(("fmt", "text", "said"), [
    ("json", "{", "not valid JSON: Expecting property name"),
    ("toml", "a = ", "not valid TOML: "),
    ("yaml", "a: &x 1\nb: *x\n", "not valid YAML: YAML anchors (&x) and aliases are not"),
    ("jsonc", '{"a": /* open', "not valid JSONC: "),
])
def test_a_file_that_does_not_parse_is_a_load_error_naming_it(
        tmp_path: Path, fmt: str, text: str, said: str) -> None:
    path = put(tmp_path, "f", text)
    with pytest.raises(LoadError) as raised:
        loading.read(path, fmt)
    assert raised.value.problem.path == path and raised.value.problem.reason.startswith(said)


def test_what_cannot_be_read_is_a_load_error_naming_it(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # (opened non-blocking: never hangs)
    huge = put(tmp_path, "huge.json", " " * (CONFIG_LIMIT + 1))
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"a": "\xff"}')
    for path, said in [(str(fifo), "not a regular file"), (huge, f"over {CONFIG_LIMIT}"),
                       (str(latin), "cannot read: 'utf-8' codec")]:
        with pytest.raises(LoadError) as raised:
            loading.read(path, "json")
        assert raised.value.problem.path == path and said in raised.value.problem.reason, \
            raised.value


def test_an_event_hooks_command_and_condition(tmp_path: Path) -> None:
    f = loading.EventFields({"command": "echo {{x}}", "bad": "echo {{x", "when":
                             "${ITERATION} > 1", "broken": "${A} =="}, "/f", "hooks[0]")
    assert f.command("command") == "echo {{x}}"
    assert f.condition("when") is not None and f.condition("missing") is None
    with pytest.raises(LoadError, match=r"hooks\[0\]\.broken: bad condition '\$\{A\} ==': "):
        f.condition("broken")
    quoted = loading.EventFields({"c": "cat <<'E'\n{{x}}\nE"}, "/f", "k")
    with pytest.raises(LoadError, match="inside a here-document with a quoted delimiter"):
        quoted.command("c")


@pytest.mark.parametrize(("name", "event"), [
    ("pre_tool", "pre_tool"), ("PreToolUse", "pre_tool"), ("pre_tol", None),
    (None, model.BLOCKABLE), (3, model.BLOCKABLE)])
def test_what_a_hook_names(name: object, event: str | None) -> None:
    assert loading.named(name) == event


def test_an_unknown_event_is_an_error_where_it_is_written() -> None:
    assert loading.event_of("Stop", "/f", "k").name == "stop"
    with pytest.raises(LoadError) as raised:
        loading.event_of("Stopp", "/f", "hooks.Stopp")
    assert raised.value.problem.key == "hooks.Stopp"
    assert raised.value.problem.reason.startswith("unknown event 'Stopp' (known: ")


def test_one_broken_entry_is_its_problem_and_a_stand_in_the_others_load() -> None:
    found = loading.Collected("nyzhi")
    entries = list(found.events("/f", {"pre_tool": [1], "nope": [2], "stop": "x",
                                       "after_turn": [3]}, "hooks"))
    assert [(e.name, key, items) for e, key, items in entries] == [
        ("pre_tool", "hooks.pre_tool", [1]), ("after_turn", "hooks.after_turn", [3])]
    assert [p.key for p in found.problems] == ["hooks.nope", "hooks.stop"]
    assert [(s.event, s.dialect) for s in found.unread] == [("stop", "nyzhi")]  # not nope's

    def build(ok: bool) -> model.EventHook:
        if not ok:
            raise LoadError("broken", "/f", "hooks.pre_tool[1]")
        return hook(warnings=("hooks.pre_tool[0]: unknown key 'x' ignored",))

    found.hook("/f", build, True, event="pre_tool")
    found.hook("/f", build, False, event="pre_tool")
    assert len(found.hooks) == 1 and found.unread[-1].event == "pre_tool"
    assert [p.severity for p in found.problems[-2:]] == ["warning", "error"]
    assert [e for e, _, _ in found.events("/f", ["not", "a", "mapping"], "hooks")] == []
    assert found.unread[-1].event == model.BLOCKABLE  # not known which: every blockable


def test_an_agents_own_event_names() -> None:
    found = loading.Collected("claude")
    events = {"PreToolUse": "pre_tool"}
    got = list(found.agent_entries("/f", "PreToolUse", [{"a": 1}, {"b": 2}], events,
                                   "Claude Code", "matcher groups"))
    assert got == [("pre_tool", "hooks.PreToolUse[0]", {"a": 1}),
                   ("pre_tool", "hooks.PreToolUse[1]", {"b": 2})]
    assert list(found.agent_entries("/f", "PreTool", [], events, "Claude Code", "x")) == []
    assert "unknown Claude Code hook event 'PreTool' (Claude Code's: PreToolUse)" in \
        found.problems[-1].reason and found.unread == []
    assert list(found.agent_entries("/f", "PreToolUse", {}, events, "Claude Code", "x")) == []
    assert found.unread[-1].event == "pre_tool"


def test_collected_reads_and_extends(tmp_path: Path) -> None:
    found = loading.Collected()
    assert found.read(put(tmp_path, "bad.json", "{"), "json") is None
    assert found.problems and found.unread[0].event == model.BLOCKABLE
    other = loading.Collected()
    other.pipelines["p"] = {}
    found.extend(other)
    assert found.pipelines == {"p": {}} and kinds.BY_NAME["stop"].blockable
