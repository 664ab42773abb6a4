"""The real Codex CLI (@openai/codex@0.171.0 from npm) calls initd through the shim line,
with no model and no network: ``codex exec`` starts a session (SessionStart) and submits
the prompt (UserPromptSubmit) before any model request, and a blocked prompt never makes
one. Its model provider is a server of the test's own on 127.0.0.1 that records requests.

``initd shim codex --write`` puts the route in the test's ~/.codex/hooks.json; the guards
are Codex hooks in the workspace's .codex/hooks.json, which Codex itself does not run in
a repository it was never told to trust (0.171.0: "Untrusted project-local configuration
is disabled"), so what runs them is initd. Codex runs hooks as ``$SHELL -lc COMMAND``
(SRC command_runner.rs); SHELL is a wrapper that keeps the test's PATH (a login shell
would reset it). ``--dangerously-bypass-hook-trust`` (CODEX: "Run enabled hooks without
requiring persisted hook trust for this invocation ... Intended only for automation that
already vets hook sources") stands for the review a person does in ``/hooks``.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_hooks_support import INITD, Endpoint, Session, session_fixture
from tests.conformance.codex_hooks_support import (
    CODEX_VERSION,
    group,
    handler,
    hooks_file,
    schema,
    validate,
    write_json,
)

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]
PREFIX = Path("/tmp") / f"initd-tests-codex-{CODEX_VERSION}"


def codex_cli() -> Path:
    """``npm i @openai/codex@0.171.0`` into /tmp (once for every run; a lock for xdist).
    Without node and npm this fails: the test is the round trip, it has no fallback."""
    assert shutil.which("npm") and shutil.which("node"), "the e2e test needs node and npm"
    binary = PREFIX / "node_modules" / ".bin" / "codex"
    PREFIX.mkdir(exist_ok=True)
    with open(PREFIX / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix",
                            str(PREFIX), f"@openai/codex@{CODEX_VERSION}"], check=True,
                           capture_output=True, timeout=480)
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                             timeout=60)
    assert version.stdout.strip() == f"codex-cli {CODEX_VERSION}", version
    return binary


@pytest.fixture
def cx(tmp_path: Path) -> Iterator[Session]:
    yield from session_fixture(tmp_path)


def run_codex(cx: Session, model: Endpoint, prompt: str) -> subprocess.CompletedProcess[str]:
    binary = codex_cli()
    codex = cx.home / ".codex"
    codex.mkdir(exist_ok=True)
    (codex / "config.toml").write_text(
        'model = "gpt-test"\nmodel_provider = "stub"\n[model_providers.stub]\n'
        f'name = "stub"\nbase_url = "http://127.0.0.1:{model.port}/v1"\n'
        'wire_api = "responses"\nrequest_max_retries = 0\nstream_max_retries = 0\n')
    shim = subprocess.run([*INITD, "shim", "codex", "--write"], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "HOME": str(cx.home)})
    assert shim.returncode == 0, shim.stderr
    wrapper = cx.root / "shell"
    wrapper.write_text('#!/bin/sh\nshift\nexec /bin/bash --noprofile --norc -c "$@"\n')
    wrapper.chmod(0o755)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
    env.update({"HOME": str(cx.home), "INITD_SOCKET": cx.sock, "SHELL": str(wrapper),
                "PATH": path})
    return subprocess.run([str(binary), "exec", "--dangerously-bypass-hook-trust",
                           "--skip-git-repo-check", prompt], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=300, env=env,
                          cwd=str(cx.ws))


def test_real_codex_session_start_and_a_blocked_prompt(cx: Session) -> None:
    """CODEX 0.171.0, observed: ``codex exec "hello"`` runs SessionStart ("hook:
    SessionStart Completed") and UserPromptSubmit before its first ``POST
    /v1/responses``; a UserPromptSubmit hook that exits 2 with a reason on stderr makes it
    print "hook: UserPromptSubmit Blocked" and send nothing to the model (SRC
    user_prompt_submit.rs ``exit_code_two_blocks_processing``). Through the shim, initd
    runs the workspace's Codex hooks with Codex's own payloads (valid by the input
    schemas) and gives Codex their block."""
    write_json(cx, "project", hooks_file(
        SessionStart=group(handler(cx.record("start")), matcher="startup"),
        UserPromptSubmit=group(handler(cx.record("prompt") +
                                       "; echo 'no prompts today' >&2; exit 2"))))
    cx.start()
    model = Endpoint(status=500)
    try:
        proc = run_codex(cx, model, "hello from the e2e test")
    finally:
        model.close()
    output = proc.stdout + proc.stderr
    start, prompt = cx.seen("start"), cx.seen("prompt")
    validate(start, schema("SessionStart", "input"))
    validate(prompt, schema("UserPromptSubmit", "input"))
    assert start["source"] == "startup" and start["cwd"] == str(cx.ws)
    assert prompt["prompt"] == "hello from the e2e test"
    assert prompt["session_id"] == start["session_id"]
    assert "UserPromptSubmit Blocked" in output, output[-3000:]
    assert [r for r in model.requests if r["path"].endswith("/responses")] == [], output


def test_real_codex_prompt_goes_on_when_the_guard_allows(cx: Session) -> None:
    """The counterpart: the same hook exiting 0 lets the prompt through, so Codex asks the
    model (``POST /v1/responses`` reaches the test's server). Blocking above is initd's
    answer, not a Codex that never got that far."""
    write_json(cx, "project", hooks_file(UserPromptSubmit=group(handler(cx.record("p")))))
    cx.start()
    model = Endpoint(status=500)
    try:
        proc = run_codex(cx, model, "hello")
    finally:
        model.close()
    assert cx.runs("p") == 1
    assert any(r["path"].endswith("/responses") for r in model.requests), \
        (proc.stdout + proc.stderr)[-3000:]
