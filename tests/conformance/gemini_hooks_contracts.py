"""Gemini CLI's machine-readable contracts for the conformance tests: the vendored settings
JSON schema and hook types (tests/conformance/contracts/gemini/README.md), Gemini's matcher
rule, and the real packages, pinned, installed with npm: the engine that reads a hook's
answer (@google/gemini-cli-core) and the agent itself (@google/gemini-cli)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.conformance.gemini_hooks_support import PINNED

CONTRACTS = Path(__file__).resolve().parent / "contracts" / "gemini"
NPM_DIR = Path("/tmp") / f"initd-conformance-gemini-{PINNED}"
CANNOT = "cannot run here: "  # tests.support.strictskips


def pinned_sha256() -> dict[str, str]:
    """The sha256 the README gives for each vendored file."""
    found = re.findall(r"^\s+([0-9a-f]{64})\s+(\S+)$", (CONTRACTS / "README.md").read_text(),
                       re.MULTILINE)
    return {name: digest for digest, name in found}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def settings_schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CONTRACTS / "settings.schema.json").read_text())
    return data


def validate_settings(data: dict[str, Any]) -> list[str]:
    """The errors of ``data`` as a settings.json by Gemini's published schema."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(settings_schema())
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(data)]


def _interface(name: str) -> str:
    text = (CONTRACTS / "hooks-types.d.ts").read_text()
    match = re.search(r"export interface " + name + r"\b[^{]*\{\n(.*?)\n\}", text, re.DOTALL)
    assert match, f"no interface {name} in hooks-types.d.ts"
    return match.group(1)


def _top_fields(body: str) -> dict[str, bool]:
    """An interface body's own fields (depth 0): name -> required."""
    fields: dict[str, bool] = {}
    depth = 0
    for line in body.splitlines():
        if depth == 0:
            match = re.match(r"\s*([A-Za-z_]+)(\??):", line)
            if match:
                fields[match.group(1)] = not match.group(2)
        depth += line.count("{") - line.count("}")
    return fields


def input_fields(event: str) -> dict[str, bool]:
    """``<Event>Input``'s own fields (types.d.ts), name -> required; HookInput's too."""
    return {**_top_fields(_interface("HookInput")), **_top_fields(_interface(event + "Input"))}


def output_fields(event: str) -> tuple[set[str], set[str] | None]:
    """The top-level fields a hook may answer for ``event`` (HookOutput, or the event's own
    Output interface when it does not extend HookOutput) and its hookSpecificOutput
    fields (None: the event has no hookSpecificOutput of its own)."""
    text = (CONTRACTS / "hooks-types.d.ts").read_text()
    base = set(_top_fields(_interface("HookOutput")))
    if not re.search(r"export interface " + event + r"Output\b", text):
        return base, None
    body = _interface(event + "Output")
    extends = re.search(r"export interface " + event + r"Output extends HookOutput", text)
    top = (base if extends else set()) | set(_top_fields(body))
    specific = re.search(r"hookSpecificOutput\?: \{\n(.*?)\n    \};", body, re.DOTALL)
    if not specific:
        return top, None
    return top, {name for name in _top_fields(
        "\n".join(line[4:] for line in specific.group(1).splitlines()))}


def gemini_matches(event: str, matcher: str | None, value: str) -> bool:
    """Whether a definition's matcher selects ``value`` (a tool's name, or a lifecycle
    event's source/reason/trigger) by Gemini's rules (hooks/index.md "Matchers";
    @google/gemini-cli-core@0.61.0 hookPlanner.matchesContext)."""
    if matcher is None or matcher.strip() in ("", "*"):
        return True
    if event in ("BeforeTool", "AfterTool"):
        try:
            return re.search(matcher.strip(), value) is not None
        except re.error:
            return matcher.strip() == value
    if event in ("SessionStart", "SessionEnd", "PreCompress"):
        return matcher.strip() == value
    return True


# the real packages ------------------------------------------------------------------


def npm_packages() -> Path:
    """A node_modules prefix with @google/gemini-cli and @google/gemini-cli-core at the
    pinned version, installed once (npm's cache under it: never the real home)."""
    import pytest

    modules = NPM_DIR / "node_modules"
    if (modules / "@google" / "gemini-cli" / "package.json").exists() and \
            (NPM_DIR / "installed").exists():
        return NPM_DIR
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.skip(CANNOT + "no node and npm to install @google/gemini-cli@" + PINNED)
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    with open(NPM_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (NPM_DIR / "installed").exists():
            env = {**os.environ, "npm_config_cache": str(NPM_DIR / ".npm-cache"),
                   "npm_config_update_notifier": "false", "HOME": str(NPM_DIR)}
            done = subprocess.run(
                [npm, "install", "--prefix", str(NPM_DIR), "--no-audit", "--no-fund",
                 "--ignore-scripts", f"@google/gemini-cli@{PINNED}",
                 f"@google/gemini-cli-core@{PINNED}"],
                capture_output=True, text=True, env=env, timeout=600)
            if done.returncode != 0:
                pytest.skip(CANNOT + "npm could not install @google/gemini-cli@" + PINNED +
                            ": " + done.stderr[-400:])
            (NPM_DIR / "installed").write_text(PINNED)
    for name in ("gemini-cli", "gemini-cli-core"):
        version = json.loads((modules / "@google" / name / "package.json").read_text())
        assert version["version"] == PINNED, version["version"]
    return NPM_DIR


ORACLE = """
import { HookRunner } from '@google/gemini-cli-core/dist/src/hooks/hookRunner.js';
import { HookAggregator } from '@google/gemini-cli-core/dist/src/hooks/hookAggregator.js';
import { writeFileSync } from 'node:fs';
const [, , eventName, command, where] = process.argv;
let text = '';
for await (const chunk of process.stdin) text += chunk;
const input = JSON.parse(text);
const runner = new HookRunner({ isTrustedFolder: () => true, sanitizationConfig: {},
                                storage: { getPlansDir: () => input.cwd } });
const result = await runner.executeHook({ type: 'command', command, timeout: 60000 },
                                        eventName, input);
const out = new HookAggregator().aggregateResults([result], eventName).finalOutput;
writeFileSync(where, JSON.stringify({
  success: result.success, exitCode: result.exitCode ?? null,
  outputFormat: result.outputFormat ?? null, output: result.output ?? null,
  error: result.error ? String(result.error) : null,
  blocked: out ? out.getBlockingError().blocked : false,
  reason: out ? out.getBlockingError().reason : '',
  stop: out ? out.shouldStopExecution() : false,
  additionalContext: out ? out.getAdditionalContext() ?? null : null,
  toolInput: out && out.getModifiedToolInput ? out.getModifiedToolInput() ?? null : null,
}));
"""


def engine_reads(event: str, command: str, data: dict[str, Any], cwd: Path,
                 env: dict[str, str]) -> dict[str, Any]:
    """What Gemini CLI's own engine (@google/gemini-cli-core's HookRunner and
    HookAggregator, the pinned package) makes of the hook ``command`` for ``event``: the
    hook is run by it as Gemini CLI runs a hook (bash -c, ``data`` on stdin, cwd)."""
    prefix = npm_packages()
    script = prefix / "oracle.mjs"
    if not script.exists() or script.read_text() != ORACLE:
        script.write_text(ORACLE)
    where = cwd.parent / f"engine-{os.getpid()}-{hashlib.md5(command.encode()).hexdigest()}"
    done = subprocess.run(["node", str(script), event, command, str(where)],
                          input=json.dumps(data), capture_output=True, text=True,
                          cwd=str(cwd), env=env, timeout=120)
    assert done.returncode == 0 and where.exists(), done
    result: dict[str, Any] = json.loads(where.read_text())
    return result
