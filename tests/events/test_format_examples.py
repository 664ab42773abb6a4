"""Each format's own examples, unchanged (tests/events/fixtures/), run by initd: the tools
they call (cargo, prettier, the formats' scripts) are stand-ins that record how they were
called, so what each example does is what is checked."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.events.support import Workspace
from tests.hooks.support import git_ok
from tests.support.harness import wait_for

FIXTURES = Path(__file__).parent / "fixtures"
RECORDER = '#!/bin/sh\nprintf "%s %s\\n" "$(basename "$0")" "$*" >> "$CALLS"\n'


@pytest.fixture
def tools(ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """cargo, prettier, eslint, black, npm on PATH; the spec's ./scripts/* in the
    workspace: each records its name and arguments in $CALLS."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("cargo", "prettier", "eslint", "black", "npm"):
        (bin_dir / name).write_text(RECORDER)
        (bin_dir / name).chmod(0o755)
    for name in ("context.sh", "backup.sh", "backup-progress.sh", "run-tests.sh",
                 "first-iteration.sh", "review.sh", "metrics.sh"):
        ws.write(f"scripts/{name}", RECORDER).chmod(0o755)
    calls = tmp_path / "calls"
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("CALLS", str(calls))
    ws.home = str(tmp_path / "home")  # the examples write ~/.autoagent/...: not the real one
    (tmp_path / "home" / ".autoagent").mkdir(parents=True)
    return calls


def test_iteratr_pre_iteration_output_becomes_the_prompts_context(ws: Workspace,
                                                                  tools: Path) -> None:
    shutil.copy(FIXTURES / "iteratr.hooks.yml", ws.path / ".iteratr.hooks.yml")
    ws.write("changed.txt", "x\n")
    outcome = ws.fire("pre_iteration", {"iteration": 3, "session": "s"})
    # git status --short, then the context script with {{iteration}}: raw, in order
    assert outcome["context"].splitlines()[:2] == ["?? .iteratr.hooks.yml", "?? changed.txt"]
    assert tools.read_text() == "context.sh 3\n"


def test_nyzhi_examples(ws: Workspace, tools: Path) -> None:
    shutil.copy(FIXTURES / "nyzhi.toml", ws.write(".nyzhi/x", "").parent / "config.toml")
    ws.fire("after_edit", {"files": ["src/main.rs", "web/app.tsx", "tool.py", "README.md"]})
    assert sorted(tools.read_text().splitlines()) == [
        "black tool.py", "cargo fmt -- src/main.rs", "eslint --fix web/app.tsx",
        "prettier --write web/app.tsx"]
    tools.unlink()
    ws.fire("after_turn")
    assert tools.read_text() == "cargo clippy --all -- -D warnings\n"
    tools.unlink()
    # pre_tool on git_commit runs the tests, and blocks the commit when they fail
    outcome = ws.fire("pre_tool", {"tool_name": "git_commit"})
    assert tools.read_text() == "cargo test\nnpm test\n"  # both examples; both pass
    assert not outcome["blocked"]
    (Path(os.environ["PATH"].split(":")[0]) / "npm").write_text(
        '#!/bin/sh\necho "1 test failed" >&2\nexit 1\n')
    outcome = ws.fire("pre_tool", {"tool_name": "git_commit"})
    assert outcome["blocked"] and outcome["reason"] == "1 test failed"
    assert ws.fire("pre_tool", {"tool_name": "read_file"})["results"] == []


@pytest.mark.slow
def test_autoagent_example(ws: Workspace, tools: Path, tmp_path: Path) -> None:
    ws.write(".autoagent/config.json", (FIXTURES / "autoagent.json").read_text())
    ws.write(".autoagent/hooks/validate-execution.sh", """
INPUT=$(cat)
SUCCESS=$(printf '%s' "$INPUT" | python3 -c \
  'import json,sys; print(json.load(sys.stdin)["success"])')
[ "$SUCCESS" = "True" ] || exit 0
printf '%s' "$INPUT" | grep -q '\\.test\\.' && exit 0
echo "ERROR: No test files were modified" >&2
exit 2
""")
    for name in ("track-execution-start.sh", "notify-completion.sh"):
        ws.write(f".autoagent/hooks/{name}", f'echo "{name} $(cat | head -c 40)" >> "$CALLS"\n')
    payload = {"issueNumber": 1, "issueTitle": "Implement user authentication",
               "issueFile": "issues/1.md", "planFile": "plans/1.md"}
    ws.fire("PreExecutionStart", payload)
    log = tmp_path / "home" / ".autoagent" / "execution.log"
    assert log.read_text() == "About to start issue 1: Implement user authentication\n"
    ws.fire("PostExecutionStart", payload)
    blocked = ws.fire("PreExecutionEnd", {**payload, "success": True,
                                          "filesModified": ["src/auth.ts"]})
    assert blocked["blocked"] and blocked["reason"] == "ERROR: No test files were modified"
    allowed = ws.fire("PreExecutionEnd", {**payload, "success": True,
                                          "filesModified": ["src/auth.ts",
                                                            "tests/auth.test.ts"]})
    assert not allowed["blocked"]
    ws.write("src/auth.ts", "export {}\n")
    git_ok(ws.path, "config", "user.email", "a@b")
    ended = ws.fire("PostExecutionEnd", {**payload, "success": True})
    assert [r["status"] for r in ended["results"]] == ["ok", "ok"]
    from tests.hooks.support import git

    assert git(ws.path, "log", "-1", "--format=%s").stdout.strip() == \
        "Complete issue #1: Implement user authentication"
    assert [line.split()[0] for line in tools.read_text().splitlines()] == [
        "track-execution-start.sh", "notify-completion.sh"]


def test_agent_pipelines_examples(ws: Workspace, tools: Path) -> None:
    shutil.copy(FIXTURES / "actions.yaml", ws.path / "pipeline.yaml")
    outcome = ws.fire("on_iteration_complete", {"iteration": 10, "stage": "work",
                                                "progress": "progress.md",
                                                "changed_files": ["a.py"]})
    by_status = [(r["command"], r["status"]) for r in outcome["results"]]
    assert by_status == [
        ("./scripts/backup-progress.sh ${PROGRESS}", "started"),  # fire-and-forget
        ("./scripts/run-tests.sh", "ok"),  # awaited
        ("spawn code-review", "ok"),  # iteration 10: the periodic review
        ("spawn collect-metrics", "ok"),  # spawn awaits by default
        # "first-iteration.sh" is skipped (iteration 10); the progress webhook goes to
        # ${SLACK_WEBHOOK}, unset here: its URL stays literal, and initd refuses it
        ("POST ${SLACK_WEBHOOK}", "started")]
    wait_for(lambda: "backup-progress.sh progress.md" in tools.read_text(),
             what="the fire-and-forget backup")
    calls = tools.read_text()
    assert "run-tests.sh \n" in calls and "review.sh \n" in calls and "metrics.sh \n" in calls
    children = Path(ws.engine.ctx.state_dir) / "children"  # type: ignore[union-attr]
    review = json.loads((children / "post_iteration-10" / "inputs.json").read_text())
    assert review == {"files_changed": "a.py", "parent_session": ws.sid}
    first = ws.fire("on_iteration_complete", {"iteration": 1, "stage": "plan"})
    assert "./scripts/first-iteration.sh" in [r["command"] for r in first["results"]]
    assert "spawn code-review" not in [r["command"] for r in first["results"]]
