"""VS Code's agent hooks (the Local harness), the machine-readable contracts and the shim:
the JSON Schemas transcribed from VS Code's TypeScript (contracts/vscode/README.md) match
the vendored TypeScript; the reference's own examples are valid by them; ``initd shim
vscode`` prints a hook file VS Code accepts, naming every event, and ``--write`` merges it
into the user's ~/.copilot/hooks without losing what is there.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.claude_hooks_support import Session, session_fixture
from tests.conformance.vscode_hooks_answers import blocked, read_answer
from tests.conformance.vscode_hooks_support import (
    CONTRACTS,
    EVENTS,
    INITD,
    VSCode,
    cmd,
    exits,
    schema,
    shell,
    validate,
    vhooks,
)

pytestmark = pytest.mark.timeout(120)


def ts(name: str) -> str:
    return (CONTRACTS / name).read_text()


def target_keys(target: str) -> list[str]:
    """The event keys of HOOKS_BY_TARGET[Target.<target>] in the vendored hookTypes.ts."""
    block = re.search(rf"\[Target\.{target}\]: \{{(.*?)\}}", ts("hookTypes.ts.excerpt"), re.S)
    assert block, target
    return re.findall(r"'(\w+)': HookType\.", block.group(1))


def test_the_file_schemas_events_are_vscodes_and_copilots() -> None:
    """hookSchema.ts: `vscodeHookProperties = buildHookProperties(Target.VSCode, ...)`,
    `copilotCliHookProperties = buildHookProperties(Target.GitHubCopilot, ...)`; the keys
    are HOOKS_BY_TARGET's (hookTypes.ts). LOCAL lists the same eight Local events."""
    data = schema("hooks-file")
    assert sorted(data["else"]["properties"]["hooks"]["properties"]) == sorted(
        target_keys("VSCode")) == sorted(EVENTS)
    assert sorted(data["then"]["properties"]["hooks"]["properties"]) == sorted(
        target_keys("GitHubCopilot"))


def test_the_command_schema_is_hook_schema_ts() -> None:
    """hookSchema.ts `vscodeHookCommandSchema`: its `properties`, `required: ['type']` and
    the `anyOf` of required commands, transcribed as they are."""
    text = ts("hookSchema.ts.excerpt").split("// ...")[0]
    props = re.findall(r"^\t\t(\w+): \{", text, re.M)
    mine = schema("hooks-file")["definitions"]["vscodeHookCommand"]
    assert sorted(mine["properties"]) == sorted(props)
    assert [r["required"][0] for r in mine["anyOf"]] == re.findall(
        r"\{ required: \['(\w+)'\] \}", text)
    assert mine["required"] == ["type"] and "required: ['type']" in text


def test_the_input_and_output_schemas_are_the_typescripts() -> None:
    """hookCommandTypes.ts and chatHookService.ts: the fields each event's input carries
    and the values its output decides with."""
    types = ts("hookCommandTypes.ts") + ts("chatHookService.ts.excerpt")
    inputs = schema("hook-input")["definitions"]
    for event, definition in inputs.items():
        for name in definition["required"]:
            if name != "hook_event_name":
                assert re.search(rf"readonly {name}\??:", types), (event, name)
    pre = schema("hook-output", "PreToolUse")
    decisions = pre["properties"]["hookSpecificOutput"]["properties"]["permissionDecision"]
    assert set(decisions["enum"]) == set(re.findall(
        r"'(\w+)'", re.search(r"permissionDecision\?: ([^;]+);", types).group(1)))  # type: ignore[union-attr]


EXAMPLES: list[tuple[str, dict[str, Any]]] = [
    ("PreToolUse", {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "Destructive command blocked by policy.",
        "additionalContext": "Production files are read-only."}}),
    ("PostToolUse", {"decision": "block", "reason": "Post-processing validation failed.",
                     "hookSpecificOutput": {
                         "hookEventName": "PostToolUse",
                         "additionalContext": "The edited file has lint errors."}}),
    ("SessionStart", {"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": "Project: my-app 2.1.0 | Branch: main"}}),
    ("Stop", {"hookSpecificOutput": {"hookEventName": "Stop", "decision": "block",
                                     "reason": "Run the test suite before finishing."}}),
    ("SubagentStop", {"decision": "block", "reason": "Verify the results before completing."}),
    ("UserPromptSubmit", {"continue": False, "stopReason": "Security policy violation",
                          "systemMessage": "Review the hook result."}),
]


@pytest.mark.parametrize("event,example", EXAMPLES)
def test_the_references_examples_are_valid(event: str, example: dict[str, Any]) -> None:
    """LOCAL, each event's "Output" example and "Common output", verbatim."""
    validate(example, schema("hook-output", event))


# -- the shim -------------------------------------------------------------------------------


@pytest.fixture
def vs(tmp_path: Path) -> Iterator[VSCode]:
    for session in session_fixture(tmp_path):
        yield VSCode(session)


def shim(session: Session, *more: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INITD_")}
    env["HOME"] = str(session.home)
    return subprocess.run([*INITD, "shim", "vscode", *more], capture_output=True, text=True,
                          timeout=60, env=env, cwd=str(session.ws))


def line_of(entry: dict[str, Any]) -> str:
    """The command VS Code runs on Linux (LOCAL: the `linux` override, else `command`;
    Copilot format: `bash`)."""
    return str(entry.get("linux") or entry.get("command") or entry.get("bash") or "")


def routes_every_event(config: dict[str, Any]) -> None:
    validate(config, schema("hooks-file"))
    assert "version" not in config, "the native format names all eight events"
    for event in EVENTS:
        lines = [line_of(e) for e in config["hooks"].get(event, [])]
        assert any("emit" in line and "vscode" in line for line in lines), (event, lines)


def test_the_printed_shim_is_a_vscode_hook_file_for_every_event(vs: VSCode) -> None:
    """Brief, interface (4): "`python -m initd shim AGENT` prints the snippet for that
    agent's hook config that routes every event the agent has to `initd emit --from
    AGENT` (in the agent's own file format)". VS Code's: hookSchema.ts hookFileSchema,
    native format ("PascalCase events without a numeric `version` property", HOOKS)."""
    proc = shim(vs.s)
    assert proc.returncode == 0, proc.stderr
    routes_every_event(json.loads(proc.stdout))


def copilot_hooks(home: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((home / ".copilot" / "hooks").glob("*.json"))]


def test_shim_write_merges_into_the_users_hooks(vs: VSCode) -> None:
    """Brief, interface (4): "`--write` merges it into the user's own config file
    ($HOME/...) without losing what is there." VS Code's user hooks: `~/.copilot/hooks/
    *.json` (HOOKS). A second --write adds no second copy."""
    mine = vhooks(SessionStart=cmd("echo mine"))
    vs.user("mine", mine)
    for _ in range(2):
        proc = shim(vs.s, "--write")
        assert proc.returncode == 0, proc.stderr
    files = copilot_hooks(vs.s.home)
    commands = [line_of(e) for f in files for es in f["hooks"].values() for e in es]
    assert "echo mine" in commands
    for f in files:
        validate(f, schema("hooks-file"))
    merged: dict[str, list[dict[str, Any]]] = {}
    for f in files:
        for event, entries in f["hooks"].items():
            merged.setdefault(event, []).extend(entries)
    routes_every_event({"hooks": merged})
    for event in EVENTS:
        assert sum("emit" in line_of(e) for e in merged[event]) == 1, event


def test_the_shims_line_run_as_vscode_runs_it_blocks_a_guarded_command(vs: VSCode) -> None:
    """SRC hookExecutor: the command runs with `shell: true` (/bin/sh -c), cwd the
    workspace root, the JSON on stdin; its exit 2 denies (LOCAL)."""
    vs.workspace("guard", vhooks(PreToolUse=cmd(exits(2, "guarded"))))
    vs.s.start()
    entry = json.loads(shim(vs.s).stdout)["hooks"]["PreToolUse"][0]
    env = {k: v for k, v in os.environ.items() if not k.startswith("INITD_")}
    env.update({"HOME": str(vs.s.home), "INITD_SOCKET": vs.s.sock,
                "PATH": f"{Path(sys.executable).parent}:{env.get('PATH', '')}",
                **entry.get("env", {})})
    proc = subprocess.run(["/bin/sh", "-c", line_of(entry)], input=json.dumps(
        shell("rm -rf /tmp/x")), capture_output=True, text=True, timeout=120, env=env,
        cwd=str(vs.s.ws))
    assert blocked(read_answer("PreToolUse", proc)), proc
