"""agent-pipelines' hooks as initd loads them (initd/events/dialects/pipelines.py): the
spec's examples (tests/events/fixtures/, verbatim), the global hooks scoped and disabled,
and every broken action named by file and key while the others load."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from initd.events.dialects import pipelines
from tests.events.support import FIXTURES, errors, home, loader_workspace, put


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return loader_workspace(tmp_path)


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
