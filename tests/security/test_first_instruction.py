"""Invariant 15: the guards are fixed before the agent's first instruction. The agent here
acts first: its very first instruction, before it sends any event, rewrites (or removes)
the file that holds a guard, in every format initd reads, in the workspace and in its
home; then it asks about the action the guard was there for. What answers must be the
guard of the session's start: its block, or that guard's error, never the agent's own
hooks nor an answer without the guard.

Each case failed on the code before the guard snapshot (ac962fa): the agent starts before
the hook service, and the service read every format but Claude Code's afresh on each
event (Claude Code's once, when it started, which came after the agent's first write).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.attack import Agent, agent_script, as_agent

FIRST = """
    import json, subprocess, sys
    act, event, data = sys.argv[1], sys.argv[2], sys.argv[3]
    subprocess.run(["sh", "-c", act], check=True, timeout=60)  # the first instruction
    out = subprocess.run([sys.executable, "-m", "initd", "emit", event, "--data", "-"],
                         input=open(data).read(), capture_output=True, text=True,
                         timeout=120)
    try:
        answer = json.loads(out.stdout)
    except ValueError:
        answer = None
    print(json.dumps({"code": out.returncode, "answer": answer,
                      "stderr": out.stderr[-2000:]}), flush=True)
"""
GUARD = 'echo GUARD-RAN; echo "the guard says no" >&2; exit 2'
AGENTS = "echo AGENTS-HOOK; exit 0"
RM = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /data"}}
# A service the agent kills comes back: the agent waits for one of its uid to be there,
# kills it, then asks (its request waits in the socket's backlog for the next service).
KILL_SERVICE = ("for i in $(seq 1200); do pid=$(pgrep -u \"$(id -u)\" -f 'initd servic[e]');"
                " [ -n \"$pid\" ] && break; sleep 0.05; done; kill -9 $pid")


def claude(command: str) -> str:
    return json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": command}]}]}})


def discobot(command: str, kind: str = "pre_tool") -> str:
    return f"#!/bin/sh\n#---\n# type: {kind}\n#---\n{command}\n"


def nyzhi(command: str) -> str:
    return f'[[agent.hooks]]\nevent = "pre_tool"\nblock = true\ncommand = {json.dumps(command)}\n'


def autoagent(command: str) -> str:
    return json.dumps({"hooks": {"PreExecutionStart": [{"command": command, "blocking": True}]}})


def iteratr(command: str) -> str:
    return f"version: 1\nhooks:\n  pre_iteration:\n    - command: {json.dumps(command)}\n"


def pipelines(command: str) -> str:
    return (f"hooks:\n  on_iteration_complete:\n    - type: shell\n      await: true\n"
            f"      command: {json.dumps(command)}\n")


# name: (the file, in the workspace or under the agent's home ~, its text around a
# command, the event the guard is on, whether that event can be blocked)
FORMATS: dict[str, tuple[str, Callable[[str], str], str, bool]] = {
    "claude project": (".claude/settings.json", claude, "pre_tool", True),
    "claude local": (".claude/settings.local.json", claude, "pre_tool", True),
    "claude user": ("~/.claude/settings.json", claude, "pre_tool", True),
    "discobot": (".discobot/hooks/10-guard.sh", discobot, "pre_tool", True),
    "nyzhi project": (".nyzhi/config.toml", nyzhi, "pre_tool", True),
    "nyzhi local": (".nyzhi/config.local.toml", nyzhi, "pre_tool", True),
    "nyzhi user": ("~/.config/nyzhi/config.toml", nyzhi, "pre_tool", True),
    "autoagent project": (".autoagent/config.json", autoagent, "pre_execution_start", True),
    "autoagent user": ("~/.autoagent/config.json", autoagent, "pre_execution_start", True),
    "iteratr": (".iteratr.hooks.yml", iteratr, "pre_iteration", False),
    "pipelines": ("pipeline.yaml", pipelines, "post_iteration", False),
    "pipelines global": ("~/.config/agent-pipelines/hooks.yaml", pipelines, "post_iteration",
                         False),
}


@pytest.fixture
def home(agent: Agent) -> Iterator[Path]:
    """The agent's home, as the test found it again afterwards (its hook files removed)."""
    yield Path(agent.home)
    for name in (".claude", ".config", ".autoagent"):
        shutil.rmtree(Path(agent.home, name), ignore_errors=True)


def place(agent: Agent, ws: Path, where: str, text: str) -> Path:
    """A format's file, as the agent's own, made before initd starts."""
    path = Path(agent.home, where[2:]) if where.startswith("~/") else ws / where
    as_agent(agent, f"mkdir -p '{path.parent}'")
    path.write_text(text)
    path.chmod(0o755)
    os.chown(path, agent.uid, agent.gid)
    return path


def first(boot, act: str, event: str, payload: dict[str, object]) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """initd booted; the agent's first instruction is ``act``, then it fires ``event``."""
    script = agent_script(FIRST)
    data = Path(script).parent / "payload.json"
    data.write_text(json.dumps(payload))
    data.chmod(0o644)
    init = boot(sys.executable, script, act, event, str(data))
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    fired: dict[str, object] = json.loads(init.stdout_lines[-1])
    return fired


def ran(fired: dict[str, object], marker: str) -> bool:
    answer = fired["answer"]
    return isinstance(answer, dict) and any(marker in str(r.get("stdout", ""))
                                            for r in answer["results"])


def held(fired: dict[str, object], blockable: bool) -> bool:
    """The session's guard answered: it ran (and blocked, where its event can be blocked),
    and no hook of the agent's ran."""
    return ran(fired, "GUARD-RAN") and not ran(fired, "AGENTS-HOOK") and (
        fired["code"] == 2 if blockable else fired["code"] == 0)


def blocked_by_its_error(fired: dict[str, object]) -> bool:
    """A discobot guard the agent changed: the guard of the start cannot run, and that
    blocks (its error, as a hook initd could not run as it was)."""
    answer = fired["answer"]
    return fired["code"] == 2 and not ran(fired, "AGENTS-HOOK") and isinstance(answer, dict) \
        and any(r["status"] in ("error", "blocked")
                and "since the session started" in str(r["error"])
                for r in answer["results"])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FORMATS))
def test_the_agents_first_rewrite_does_not_replace_a_guard(
        boot, agent: Agent, ws: Path, home: Path, name: str) -> None:
    where, text, event, blockable = FORMATS[name]
    path = place(agent, ws, where, text(GUARD))
    swapped = Path(agent_script("")).parent / "swapped"
    swapped.write_text(text(AGENTS))
    swapped.chmod(0o755)
    fired = first(boot, f"cp '{swapped}' '{path}'", event, RM)
    if name == "discobot":  # its own script changed: the guard of the start cannot run
        assert blocked_by_its_error(fired), fired
    else:
        assert held(fired, blockable), fired


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FORMATS))
def test_the_agents_first_removal_does_not_remove_a_guard(
        boot, agent: Agent, ws: Path, home: Path, name: str) -> None:
    where, text, event, blockable = FORMATS[name]
    path = place(agent, ws, where, text(GUARD))
    fired = first(boot, f"rm -f '{path}'", event, RM)
    if name == "discobot":
        assert blocked_by_its_error(fired), fired
    else:
        assert held(fired, blockable), fired


def test_emptying_claude_settings_then_killing_the_service_keeps_the_guard(
        boot, agent: Agent, ws: Path) -> None:
    """The service the agent kills comes back with the guards of the session's start
    (root keeps the snapshot), not with the settings as the agent left them."""
    path = place(agent, ws, ".claude/settings.json", claude(GUARD))
    fired = first(boot, f"echo '{{}}' > '{path}'; {KILL_SERVICE}", "pre_tool", RM)
    assert held(fired, True), fired


def test_a_discobot_guard_made_a_session_hook_still_guards(
        boot, agent: Agent, ws: Path) -> None:
    """Its front matter rewritten (``type: session``) and the service killed: the guard of
    the start stands, as its error."""
    path = place(agent, ws, ".discobot/hooks/10-guard.sh", discobot(GUARD))
    swapped = Path(agent_script("")).parent / "swapped"
    swapped.write_text(discobot(AGENTS, "session"))
    fired = first(boot, f"cat '{swapped}' > '{path}'; {KILL_SERVICE}", "pre_tool", RM)
    assert blocked_by_its_error(fired), fired


def test_hooks_the_agent_adds_are_not_the_sessions(boot, agent: Agent, ws: Path) -> None:
    """A workspace with no hook file at the start: the agent's first instruction writes
    Claude Code settings whose hook would answer for it. The session's guard set is the
    one it started with (none): that hook never runs."""
    swapped = Path(agent_script("")).parent / "swapped"
    swapped.write_text(claude(AGENTS))
    fired = first(boot, f"mkdir -p '{ws}/.claude' && cp '{swapped}' "
                        f"'{ws}/.claude/settings.json'", "pre_tool", RM)
    assert fired["code"] == 0 and not ran(fired, "AGENTS-HOOK"), fired


def test_a_guard_on_containerenv_keeps_the_environment_of_the_start(
        boot, agent: Agent, ws: Path) -> None:
    """devcontainer.json is read before the agent starts; its containerEnv is the hook
    service's, and stays so when the agent rewrites the file and kills the service."""
    place(agent, ws, ".devcontainer/devcontainer.json",
          json.dumps({"containerEnv": {"GUARD_MODE": "strict"}}))
    place(agent, ws, ".discobot/hooks/10-guard.sh", discobot(
        '[ "$GUARD_MODE" = strict ] && { echo GUARD-RAN; echo no >&2; exit 2; }; exit 0'))
    fired = first(boot, f"echo '{{\"containerEnv\": {{\"GUARD_MODE\": \"off\"}}}}' > "
                        f"'{ws}/.devcontainer/devcontainer.json'; {KILL_SERVICE}",
                  "pre_tool", RM)
    assert held(fired, True), fired


TURN = """
    import json, os, subprocess, sys
    act, changed = sys.argv[1], sys.argv[2]
    subprocess.run(["sh", "-c", act], check=True, timeout=60)  # the first instruction
    with open(changed, "w") as f:
        f.write("print(1)\\n")
    out = subprocess.run([sys.executable, "-m", "initd", "turn"], capture_output=True,
                         text=True, timeout=120)
    print(json.dumps({"code": out.returncode, "out": out.stdout, "err": out.stderr[-2000:]}),
          flush=True)
"""


@pytest.mark.parametrize("act", ["rm -f '{hook}'", "sed -i 's/type: file/type: session/' '{hook}'"],
                         ids=["removed", "retyped"])
def test_a_file_hook_of_the_start_still_checks_the_turn(
        boot, agent: Agent, ws: Path, act: str) -> None:
    """A file hook (end of turn) the agent removes or makes a session hook at once still
    checks the turn, as it was: the hooks the workspace adds later run too, and one that
    was there stays (its removal: that hook's failure, which the model is told)."""
    path = place(agent, ws, ".discobot/hooks/20-check.sh",
                 '#!/bin/sh\n#---\n# type: file\n# pattern: "*.py"\n#---\n'
                 'echo "the check says no"; exit 1\n')
    script = agent_script(TURN)
    init = boot(sys.executable, script, act.format(hook=path), str(ws / "x.py"))
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    turned = json.loads(init.stdout_lines[-1])
    assert turned["code"] == 2, turned  # re-prompt: the hook of the start failed
    assert "20-check" in turned["out"], turned


def test_a_linked_discobot_guard_whose_file_changed_still_guards(
        boot, agent: Agent, ws: Path) -> None:
    """A guard kept elsewhere in the workspace and linked into the hooks directory (``ln -s
    ../../scripts/guard.sh``): the agent's first instruction rewrites the file it names.
    The file that runs is compared with the snapshot too: that guard's error blocks."""
    place(agent, ws, "scripts/guard.sh", discobot(GUARD))
    as_agent(agent, f"ln -s ../../scripts/guard.sh {ws}/.discobot/hooks/10-guard.sh")
    swapped = Path(agent_script("")).parent / "swapped"
    swapped.write_text(discobot(AGENTS))
    fired = first(boot, f"cat '{swapped}' > '{ws}/scripts/guard.sh'", "pre_tool", RM)
    assert blocked_by_its_error(fired), fired
