"""Each dialect's loader, fed each format's own examples (tests/events/fixtures/, copied
verbatim; autoagent.json is the "Configuration Structure" of AutoAgent's hooks design),
and every way a file or a hook in it can be wrong: the error names the file and the key,
and the other hooks still load."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from initd.config.problems import LoadError
from initd.events import dialects
from initd.events.dialects import autoagent, iteratr, nyzhi, pipelines
from tests.hooks.support import add_hook

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path / "ws"


def home(ws: Path) -> str:
    return str(ws.parent / "home")


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def errors(found: dialects.Collected) -> list[str]:
    return [p.text for p in found.problems if p.severity == "error"]


# --- iteratr


def test_iteratr_spec_example(ws: Path) -> None:
    shutil.copy(FIXTURES / "iteratr.hooks.yml", ws / ".iteratr.hooks.yml")
    found = iteratr.load(str(ws))
    assert errors(found) == []
    assert [(h.event, h.spec._asdict()["command"], h.timeout, h.action, h.wait)
            for h in found.hooks] == [
        ("pre_iteration", "git status --short", 5.0, "shell", True),
        ("pre_iteration", "./scripts/context.sh {{iteration}}", 60.0, "shell", True)]
    assert found.hooks[1].key == "hooks.pre_iteration[1]"


def test_iteratr_shorthand_and_default_timeout(ws: Path) -> None:
    shutil.copy(FIXTURES / "iteratr-shorthand.hooks.yml", ws / ".iteratr.hooks.yml")
    [hook] = iteratr.load(str(ws)).hooks
    assert (hook.spec._asdict()["command"], hook.timeout) == ("./scripts/context.sh", 30.0)


def test_iteratr_later_events_and_errors(ws: Path) -> None:
    put(ws / ".iteratr.hooks.yml", """
hooks:
  session_start: [{command: "echo start"}]
  on_error: [{command: "echo {{error}}"}]
  pre_iteraton: [{command: "typo"}]
  post_iteration:
    - {timeout: 3}
    - command: "echo after"
      pipe_output: true
""")
    found = iteratr.load(str(ws))
    assert [(h.event, h.spec._asdict()["command"]) for h in found.hooks] == [
        ("session_start", "echo start"), ("error", "echo {{error}}"),
        ("post_iteration", "echo after")]
    path = ws / ".iteratr.hooks.yml"
    assert errors(found) == [
        f"{path}: hooks.pre_iteraton: unknown event 'pre_iteraton' (known: "
        + ", ".join(e.name for e in __import__("initd.hooks.kinds", fromlist=["EVENTS"])
                    .EVENTS) + ", or an alias of one)",
        f"{path}: hooks.post_iteration[0].command: required"]
    assert found.hooks[2].warnings == ("hooks.post_iteration[1]: unknown key 'pipe_output' "
                                       "ignored",)


@pytest.mark.parametrize(("text", "message"), [
    ("version: 2\nhooks: {}\n", "version: expected 1, got 2"),
    ("hooks: [1, 2]\n", "hooks: expected a mapping"),
    ("- a\n", "expected a mapping with version and hooks"),
    ("hooks:\n  pre_iteration: {command: [1]}\n", "hooks.pre_iteration[0].command: expected "
                                                    "text, got [1]"),
    ("hooks: {pre_iteration: [{command: x, timeout: -1}]}\n", "timeout: expected a number > 0"),
    ("hooks: {pre_iteration: [{command: x, timeout: yes}]}\n", "timeout: expected a number"),
    ("hooks:\n\tpre_iteration: []\n", "not valid YAML"),
])
def test_iteratr_broken_files_say_where(ws: Path, text: str, message: str) -> None:
    put(ws / ".iteratr.hooks.yml", text)
    [error] = errors(iteratr.load(str(ws)))
    assert error.startswith(str(ws / ".iteratr.hooks.yml")) and message in error


# --- nyzhi


def test_nyzhi_docs_examples(ws: Path) -> None:
    shutil.copy(FIXTURES / "nyzhi.toml", put(ws / ".nyzhi" / "x", "").parent / "config.toml")
    found = nyzhi.load(str(ws), home(ws))
    assert errors(found) == []
    rows = [(h.event, h.spec._asdict()["command"], h.pattern, h.timeout, h.block, h.tool_name)
            for h in found.hooks]
    assert rows[:4] == [
        ("after_edit", "cargo fmt -- {file}", ("*.rs",), 30.0, False, ()),
        ("after_turn", "cargo clippy --all -- -D warnings", (), 60.0, False, ()),
        ("after_edit", "prettier --write {file}", ("*.ts", "*.tsx"), 30.0, False, ()),
        ("pre_tool", "cargo test", (), 120.0, True, ("git_commit",))]
    assert len(rows) == 7


def test_nyzhi_files_load_user_then_project_then_local_and_aliases(ws: Path) -> None:
    put(Path(home(ws)) / ".config" / "nyzhi" / "config.toml",
        '[[agent.hooks]]\nevent = "post_tool"\ncommand = "echo user"\n')
    put(ws / ".nyzhi" / "config.toml",
        '[[agent.hooks]]\nevent = "pre_tool_use"\ncommand = "echo project"\n'
        '[[agent.hooks]]\nevent = "post_tool_failure"\ncommand = "echo failure"\n')
    put(ws / ".nyzhi" / "config.local.toml",
        '[agent]\nmodel = "x"\n[[agent.hooks]]\nevent = "teammate_idle"\ncommand = "echo local"\n')
    found = nyzhi.load(str(ws), home(ws))
    assert [(h.event, h.spec._asdict()["command"], h.workspace) for h in found.hooks] == [
        ("post_tool", "echo user", False), ("pre_tool", "echo project", True),
        ("post_tool_failure", "echo failure", True), ("teammate_idle", "echo local", True)]


def test_nyzhi_errors_do_not_stop_the_other_hooks(ws: Path) -> None:
    path = put(ws / ".nyzhi" / "config.toml", """
[[agent.hooks]]
event = "pre_tol"
command = "x"

[[agent.hooks]]
event = "after_turn"
command = "ok"

[[agent.hooks]]
event = "after_turn"
command = "x"
block = true

[[agent.hooks]]
event = "pre_tool"
type = "prompt"
command = "x"

[[agent.hooks]]
event = "pre_tool"
command = "x"
tool_name = 3
""")
    found = nyzhi.load(str(ws), home(ws))
    assert [h.spec._asdict()["command"] for h in found.hooks] == ["ok"]
    assert [e.split(": ", 2)[1:] for e in errors(found)] == [
        ["agent.hooks[0].event", f"unknown event 'pre_tol' (known: {_known()}, or an "
                                 "alias of one)"],
        ["agent.hooks[2].block", "after_turn cannot be blocked (only pre_tool, "
                                 "teammate_idle, task_completed and the Pre*/Stop events can)"],
        ["agent.hooks[3].type", "only 'command' hooks run (nyzhi reserves 'prompt'), got "
                                "'prompt'"],
        ["agent.hooks[4].tool_name", "expected text (comma-separated) or a list of texts, "
                                     "got 3"]]
    assert all(e.startswith(str(path)) for e in errors(found))


def _known() -> str:
    from initd.hooks import kinds as model

    return model.known()


def test_nyzhi_bad_toml(ws: Path) -> None:
    put(ws / ".nyzhi" / "config.toml", "[[agent.hooks]\nevent =\n")
    [error] = errors(nyzhi.load(str(ws), home(ws)))
    assert "config.toml: not valid TOML" in error


# --- AutoAgent


def test_autoagent_design_example(ws: Path) -> None:
    put(ws / ".autoagent" / "config.json", (FIXTURES / "autoagent.json").read_text())
    found = autoagent.load(str(ws), home(ws))
    assert errors(found) == []
    rows = [(h.event, h.action, h.label, h.block, h.timeout) for h in found.hooks]
    assert rows == [
        ("pre_execution_start", "shell", "echo 'About to start issue {{issueNumber}}: "
         "{{issueTitle}}' >> ~/.autoagent/execution.log", False, 60.0),
        ("post_execution_start", "shell", "bash .autoagent/hooks/track-execution-start.sh",
         False, 60.0),
        ("pre_execution_end", "shell", "bash .autoagent/hooks/validate-execution.sh", True,
         60.0),
        ("post_execution_end", "shell", "bash .autoagent/hooks/notify-completion.sh", False,
         60.0),
        ("post_execution_end", "git-commit",
         "git commit -m 'Complete issue #{{issueNumber}}: {{issueTitle}}'", False, 60.0)]


def test_autoagent_workspace_merges_over_the_user_per_event(ws: Path) -> None:
    put(Path(home(ws)) / ".autoagent" / "config.json", json.dumps({"hooks": {
        "Stop": [{"type": "command", "command": "user stop"}],
        "PostExecutionEnd": [{"type": "command", "command": "user end"}]}}))
    put(ws / ".autoagent" / "config.json", json.dumps({"hooks": {
        "PostExecutionEnd": [{"type": "git-push"}]}}))
    found = autoagent.load(str(ws), home(ws))
    assert [(h.event, h.label, h.workspace) for h in found.hooks] == [
        ("stop", "user stop", False), ("post_execution_end", "git push origin current", True)]


@pytest.mark.parametrize(("hooks", "message"), [
    ({"PreExecutionBegin": []}, "hooks.PreExecutionBegin: unknown event 'PreExecutionBegin'"),
    ({"Stop": {"type": "command"}}, "hooks.Stop: expected a list of hooks"),
    ({"Stop": [{"type": "command"}]}, "hooks.Stop[0].command: required"),
    ({"Stop": [{"type": "shell", "command": "x"}]}, "hooks.Stop[0].type: expected one of "
                                                    "command, git-commit, git-push"),
    ({"Stop": [{"command": "x", "timeout": "60s"}]}, "hooks.Stop[0].timeout: expected a "
                                                      "number > 0, got '60s'"),
    ({"Stop": [{"command": "x", "blocking": "yes"}]}, "hooks.Stop[0].blocking: expected true "
                                                       "or false"),
])
def test_autoagent_errors_name_file_and_key(ws: Path, hooks: object, message: str) -> None:
    path = put(ws / ".autoagent" / "config.json", json.dumps({"hooks": hooks}))
    [error] = errors(autoagent.load(str(ws), home(ws)))
    assert error.startswith(f"{path}: ") and message in error


def test_set_auto_commit_and_push_manage_the_built_in_hooks(ws: Path) -> None:
    path = put(ws / ".autoagent" / "config.json", json.dumps(
        {"providers": ["claude"], "hooks": {"PostExecutionEnd": [
            {"type": "command", "command": "notify"}]}}))
    assert "added the git-push hook" in autoagent.set_auto(str(ws), "git-push", True)
    assert "added the git-commit hook" in autoagent.set_auto(str(ws), "git-commit", True)
    assert "already in" in autoagent.set_auto(str(ws), "git-commit", True)
    data = json.loads(path.read_text())
    assert data["providers"] == ["claude"]  # the rest of the file is kept
    assert [e["type"] for e in data["hooks"]["PostExecutionEnd"]] == [
        "command", "git-commit", "git-push"]  # a push goes after the commit
    assert data["hooks"]["PostExecutionEnd"][1]["message"] == autoagent.COMMIT_MESSAGE
    assert "removed the git-commit hook" in autoagent.set_auto(str(ws), "git-commit", False)
    assert [e["type"] for e in json.loads(path.read_text())["hooks"]["PostExecutionEnd"]] == [
        "command", "git-push"]
    fresh = ws.parent / "fresh"
    fresh.mkdir()
    autoagent.set_auto(str(fresh), "git-commit", True)  # no config yet: one is made
    assert autoagent.load(str(fresh), home(ws)).hooks[0].action == "git-commit"
    put(fresh / ".autoagent" / "config.json", "{not json")
    with pytest.raises(LoadError, match="not valid JSON"):
        autoagent.set_auto(str(fresh), "git-push", True)


# --- agent-pipelines


def test_pipelines_spec_examples(ws: Path) -> None:
    shutil.copy(FIXTURES / "actions.yaml", ws / "pipeline.yaml")
    found = pipelines.load(str(ws), home(ws))
    assert errors(found) == []
    rows = [(h.event, h.action, h.wait, h.timeout, h.on_failure, h.retries,
             h.when.text if h.when else None) for h in found.hooks]
    assert rows == [
        ("post_iteration", "shell", False, 300.0, "continue", 3, None),
        ("post_iteration", "shell", True, 300.0, "abort", 3, None),
        ("post_iteration", "spawn", True, 3600.0, "continue", 0, "${ITERATION} % 10 == 0"),
        ("post_iteration", "spawn", True, 3600.0, "continue", 0, None),
        ("post_iteration", "shell", False, 300.0, "continue", 3, "${ITERATION} == 1"),
        ("post_iteration", "webhook", False, 3600.0, "continue", 3,
         "${STAGE} == 'work' && ${ITERATION} > 5"),
        ("stage_complete", "webhook", True, 86400.0, "continue", 3, "${STAGE} == 'plan'"),
        ("session_end", "webhook", False, 3600.0, "continue", 3, None)]
    approval = found.hooks[6].spec._asdict()
    assert (approval["method"], approval["callback_port"], approval["on_timeout"]) == (
        "POST", 8765, "abort")
    assert approval["body"]["actions"][0]["callback"] == "${CALLBACK_URL}?action=approve"
    assert found.hooks[2].spec._asdict() == {"pipeline": "code-review", "inputs": {
        "files_changed": "${CHANGED_FILES}", "parent_session": "${SESSION}"}}
    assert set(found.pipelines) == {"code-review", "collect-metrics"}


def test_pipelines_global_stage_scoping_and_disable(ws: Path) -> None:
    shutil.copy(FIXTURES / "global-hooks.yaml",
                put(Path(home(ws)) / ".config" / "agent-pipelines" / "x", "").parent
                / "hooks.yaml")
    shutil.copy(FIXTURES / "pipeline.yaml", ws / "pipeline.yaml")
    shutil.copy(FIXTURES / "loop.yaml", ws / "loop.yaml")
    found = pipelines.load(str(ws), home(ws))
    assert errors(found) == []
    assert [(h.event, h.label, h.stage, h.workspace) for h in found.hooks] == [
        ("session_end", "POST ${SLACK_WEBHOOK}", None, False),
        ("error", "POST ${PAGERDUTY_WEBHOOK}", None, False),
        ("stage_complete", "POST ${SLACK_WEBHOOK}", None, True),
        ("post_iteration", "./scripts/backup.sh", "work", True)]
    put(ws / "loop.yaml", (FIXTURES / "loop.yaml").read_text() + "disable_global_hooks: true\n")
    assert [h.source for h in pipelines.load(str(ws), home(ws)).hooks] == [
        str(ws / "pipeline.yaml"), str(ws / "loop.yaml")]


@pytest.mark.parametrize(("action", "message"), [
    ({"command": "x"}, "hooks.on_error[0].type: required: shell, webhook or spawn"),
    ({"type": "shel", "command": "x"}, "type: expected one of shell, webhook, spawn"),
    ({"type": "shell"}, "hooks.on_error[0].command: required"),
    ({"type": "shell", "command": "x", "when": "${ITERATION} = 1"},
     "hooks.on_error[0].when: bad condition '${ITERATION} = 1': unexpected '= 1'"),
    ({"type": "shell", "command": "x", "on_failure": "stop"}, "on_failure: expected one of "
                                                               "continue, abort, retry"),
    ({"type": "shell", "command": "x", "retries": 1.5}, "retries: expected a whole number"),
    ({"type": "webhook"}, "hooks.on_error[0].url: required"),
    ({"type": "webhook", "url": "u", "method": "FETCH"}, "method: expected one of GET, POST"),
    ({"type": "webhook", "url": "u", "callback_port": 70000}, "callback_port: expected a "
                                                                "port 0-65535"),
    ({"type": "webhook", "url": "u", "headers": {"X": 1}}, "headers: expected a mapping of "
                                                           "header names to texts"),
    ({"type": "spawn", "pipeline": "nope"}, "hooks.on_error[0].pipeline: no pipeline 'nope' "
                                            "is defined"),
])
def test_pipelines_broken_actions_say_where(ws: Path, action: dict[str, object],
                                            message: str) -> None:
    import yaml

    path = put(ws / "pipeline.yaml", yaml.safe_dump({"hooks": {"on_error": [
        action, {"type": "shell", "command": "still loads"}]}}))
    found = pipelines.load(str(ws), home(ws))
    [error] = errors(found)
    assert error.startswith(f"{path}: ") and message in error, error
    assert [h.label for h in found.hooks] == ["still loads"]


def test_pipelines_unknown_hook_point(ws: Path) -> None:
    put(ws / "pipeline.yaml", "hooks:\n  on_iteration_finish: []\n")
    [error] = errors(pipelines.load(str(ws), home(ws)))
    assert "pipeline.yaml: hooks.on_iteration_finish: unknown event 'on_iteration_finish'" \
        in error


# --- discobot front matter, and all of them together


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


def test_emit_from_imports_the_one_wire_it_speaks() -> None:
    """``initd emit --from AGENT`` runs on every event of the agent: it loads its agent's
    wire, never every format's loader (the service, not emit, reads hook files)."""
    import subprocess
    import sys

    from initd.events import sources

    for agent in sources.AGENTS:
        code = ("import sys, io\n"
                "from initd.commands.emitfrom import emit_from\n"
                "sys.stdin = io.TextIOWrapper(io.BytesIO(b'garbage'))\n"
                f"emit_from({agent!r}, None, '/nonexistent/sock', 'k')\n"
                "print(' '.join(sorted(m for m in sys.modules if m.startswith('initd'))))\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=60, check=True)
        loaded = out.stdout.split()
        assert f"initd.events.wires.{agent}" in loaded, out
        others = [m for m in loaded if m.startswith(("initd.events.dialects",
                                                     "initd.events.engine"))
                  or (m.startswith("initd.events.wires.") and m.endswith(
                      tuple(f".{a}" for a in sources.AGENTS if a != agent)))]
        assert others == [], others
