"""No attacker-controlled string is ever executed as shell code, and no event payload
replaces a hook's environment (invariant 4): the agent fires events with hostile values
at hooks whose commands put placeholders after comments and here-documents, in
``find -exec``, in URLs and in JSON; its own environment stays initd's."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.attack import Agent, agent_script


@pytest.fixture
def evidence() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="initd-atk-evidence-"))
    os.chmod(path, 0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


FIRE = """
    import json, sys
    from tests.support.agent_side import call
    for event, payload in json.loads(sys.argv[1]):
        code, outcome = call("POST", f"/v1/events/{event}", payload)
        print(json.dumps([code, [r["status"] for r in outcome["results"]]]), flush=True)
"""


def pipeline(ws: Path, agent: Agent, hooks: list[dict[str, object]]) -> None:
    path = ws / "pipeline.yaml"
    path.write_text(json.dumps({"hooks": {"on_iteration_start": [
        {"type": "shell", "await": True, "timeout": 20, **h} for h in hooks]}}))
    os.chown(path, agent.uid, agent.gid)


def values(evidence: Path) -> list[str]:
    """What an attacker would send, each trying to create ``pwned`` by running a command."""
    pwned = evidence / "pwned"
    return [f"x -o -exec touch {pwned} ;", f"$(touch {pwned})", f"`touch {pwned}`",
            f"'; touch {pwned}; '", f'"; touch {pwned}; "', f"\nEOF\ntouch {pwned}\ncat <<EOF\n",
            f"x; touch {pwned} #"]


CONTEXTS = {
    "after a comment with a quote": '# the "name may be odd\nfind {dir} -maxdepth 0 '
                                    "-name ${NAME}",
    "after a here-document with a quote": 'cat <<EOF >/dev/null\nsay "hi\nEOF\n'
                                          "find {dir} -maxdepth 0 -name ${NAME}",
    "inside a here-document": "cat <<EOF >{dir}/heredoc.out\n${NAME}\nEOF",
    "as find -exec's argument": "find {dir} -maxdepth 0 -exec echo ${NAME} {} \\;",
    "in a JSON text in single quotes": "echo '{\"name\": \"${NAME}\"}' >/dev/null",
    "in double quotes after a comment": "# it's fine\necho \"${NAME}\" >/dev/null",
}


@pytest.mark.parametrize("context", list(CONTEXTS))
def test_hostile_values_never_run_as_shell_code(boot, agent: Agent, ws: Path,
                                                evidence: Path, context: str) -> None:
    pipeline(ws, agent, [{"command": CONTEXTS[context].replace("{dir}", str(evidence))}])
    events = [["on_iteration_start", {"name": value}] for value in values(evidence)]
    init = boot(sys.executable, agent_script(FIRE), json.dumps(events))
    assert init.wait(timeout=60) == 0, init.stderr
    assert len(init.stdout_lines) == len(events), init.stderr
    assert not (evidence / "pwned").exists()
    if context == "inside a here-document":  # the value arrives exactly, quotes and all
        assert (evidence / "heredoc.out").read_text() == values(evidence)[-1] + "\n"


def test_payload_keys_never_replace_the_hooks_environment(boot, agent: Agent, ws: Path,
                                                          evidence: Path) -> None:
    fake = evidence / "bin"
    fake.mkdir()
    (fake / "ls").write_text(f"#!/bin/sh\n/usr/bin/touch {evidence}/pwned\n")
    (fake / "ls").chmod(0o755)
    pipeline(ws, agent, [{"command": f"ls / >/dev/null; env > {evidence}/env"}])
    hostile = {"path": str(fake), "ld_preload": "/tmp/evil.so", "home": "/tmp",
               "git_dir": "/tmp/evil", "ifs": "x", "bash_env": "/tmp/evil.sh",
               "pythonpath": "/tmp/evil"}
    init = boot(sys.executable, agent_script(FIRE),
                json.dumps([["on_iteration_start", hostile]]))
    assert init.wait(timeout=60) == 0, init.stderr
    assert not (evidence / "pwned").exists()
    env = dict(line.split("=", 1) for line in (evidence / "env").read_text().splitlines()
               if "=" in line)
    assert env["HOME"] == agent.home and env["PATH"] == os.environ["PATH"]
    for name in ("LD_PRELOAD", "GIT_DIR", "IFS", "BASH_ENV", "PYTHONPATH"):
        assert env.get(name) != hostile[name.lower()], name


class _Catcher(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.server.hits.append(self.path)  # type: ignore[attr-defined]
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def servers() -> Iterator[list[http.server.HTTPServer]]:
    made = []
    for _ in range(2):
        server = http.server.HTTPServer(("127.0.0.1", 0), _Catcher)
        server.hits = []  # type: ignore[attr-defined]
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        made.append(server)
    yield made
    for server in made:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_the_environment_beats_the_payload_in_a_webhook_url(
        boot, agent: Agent, ws: Path, servers: list[http.server.HTTPServer]) -> None:
    good, evil = (f"http://127.0.0.1:{s.server_address[1]}" for s in servers)
    path = ws / "pipeline.yaml"
    path.write_text(json.dumps({"hooks": {"on_iteration_start": [
        {"type": "webhook", "await": False, "url": "${HOOK_TARGET}", "body": {"a": 1}}]}}))
    os.chown(path, agent.uid, agent.gid)
    os.environ["HOOK_TARGET"] = f"{good}/good"
    try:
        init = boot(sys.executable, agent_script(FIRE + "\n    import time; time.sleep(2)\n"),
                    json.dumps([["on_iteration_start", {"hook_target": f"{evil}/evil"}]]))
        assert init.wait(timeout=60) == 0, init.stderr
    finally:
        del os.environ["HOOK_TARGET"]
    assert servers[1].hits == []  # type: ignore[attr-defined]
    assert servers[0].hits == ["/good"]  # type: ignore[attr-defined]


def test_a_nul_byte_in_a_payload_is_a_result_never_a_server_error(
        boot, agent: Agent, ws: Path, evidence: Path) -> None:
    """An environment variable or an argument cannot hold a NUL byte: the value is left
    out of the environment (the hook has it on stdin), and a hook that puts it in its
    command cannot be started: a result saying so, never the API's 500 (schemathesis
    found it: "internal error: ValueError: embedded null byte")."""
    pipeline(ws, agent, [{"command": f"env > {evidence}/env"}, {"command": "echo ${NAME}"}])
    init = boot(sys.executable, agent_script(FIRE), json.dumps(
        [["on_iteration_start", {"name": "a\u0000b", "other": "fine"}]]))
    assert init.wait(timeout=60) == 0, init.stderr
    [line] = init.stdout_lines
    code, statuses = json.loads(line)
    assert code == 200 and statuses[0] == "ok" and statuses[1] != "ok", statuses
    env = dict(line.split("=", 1) for line in (evidence / "env").read_text().splitlines()
               if "=" in line)
    assert "NAME" not in env and env["OTHER"] == "fine"
