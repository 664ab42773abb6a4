"""The agent against Codex's hook files and its way in (``initd emit --from codex``), with
initd booted as PID 1 over a workspace of its own (tests/support/attack.py): the agent
runs ``initd emit --from codex`` itself with Codex's payloads (the route Codex takes), so
whatever it can do to its files, the answer it gets is the proof.

- rewriting ``.codex/hooks.json`` and its inline ``[hooks]`` (or turning hooks off with
  ``[features] hooks = false``) during the session removes no guard of its start;
- what it leaves in its Codex files for the next start (a FIFO, a link to a root secret,
  64 MiB, a directory, garbage) costs nothing, shows nothing of root's, and blocks;
- initd's own line with more shell code on it is a hook, which runs;
- a write to ``.env`` by ``apply_patch``, however the patch names the file and wherever
  it is among the files of one patch, reaches a Claude Code ``Write|Edit`` guard as that
  file; a patch of too many files, or one a hook rewrote a file of, is not allowed.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.codex_hooks_answers import read_answer
from tests.conformance.codex_hooks_support import bash, payload
from tests.support.attack import Agent, Canary, agent_script, as_agent
from tests.support.harness import Initd

GUARD = "cat >/dev/null; echo 'the guard says no' >&2; exit 2"
HOOKS = json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": GUARD}]}]}})
TOML = ('[[hooks.PreToolUse]]\nmatcher = "Bash"\n[[hooks.PreToolUse.hooks]]\n'
        f'type = "command"\ncommand = {json.dumps(GUARD.replace("no", "no twice"))}\n')
ENV_GUARD = ("f=$(python3 -c 'import json,sys; print(json.load(sys.stdin)"
             "[\"tool_input\"].get(\"file_path\", \"\"))'); "
             "case \"$f\" in */.env) echo \"no writes to $f\" >&2; exit 2;; esac; exit 0")
# as the agent: run ``before`` (sh), then each payload through initd emit --from codex
EMIT = """
    import json, subprocess, sys
    before, payloads = sys.argv[1], json.loads(sys.argv[2])
    subprocess.run(["sh", "-c", before], check=True)
    answers = []
    for sent in payloads:
        out = subprocess.run([sys.executable, "-m", "initd", "emit", "--from", "codex"],
                             input=json.dumps(sent), capture_output=True, text=True,
                             timeout=120)
        answers.append({"code": out.returncode, "out": out.stdout, "err": out.stderr})
    print(json.dumps(answers), flush=True)
"""


class Answer:
    """What Codex reads of ``initd emit --from codex``'s answer (codex_hooks_answers)."""

    def __init__(self, said: dict[str, Any]) -> None:
        from subprocess import CompletedProcess

        self.raw = said
        self.read = read_answer("PreToolUse", CompletedProcess([], said["code"], said["out"],
                                                               said["err"]))


def emit(boot: Callable[..., Initd], *sent: dict[str, Any], before: str = "true"
         ) -> tuple[list[Answer], str]:
    init = boot(sys.executable, agent_script(EMIT), before, json.dumps(list(sent)))
    assert init.wait(timeout=180) == 0, init.stderr[-3000:]
    return [Answer(a) for a in json.loads(init.stdout_lines[-1])], init.stderr


@pytest.fixture(autouse=True)
def codex_home(agent: Agent) -> Iterator[Path]:
    """The agent's ~/.codex, its own for each test (the agent user is the run's)."""
    path = Path(agent.home) / ".codex"
    shutil.rmtree(path, ignore_errors=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def owned(agent: Agent, path: Path, text: str) -> Path:
    """``text`` at ``path``, a file of the agent's (its directories too)."""
    as_agent(agent, f"mkdir -p {path.parent}")
    path.write_text(text)
    os.chown(path, agent.uid, agent.gid)
    return path


def test_rewriting_its_codex_files_in_the_session_removes_no_guard(
        boot: Callable[..., Initd], agent: Agent, ws: Path) -> None:
    """A guard in the workspace's .codex/hooks.json and one inline in ~/.codex/config.toml:
    the agent empties the first, turns hooks off in both config.toml files
    (``[features] hooks = false``) and asks again: the guards of the start answer."""
    owned(agent, ws / ".codex" / "hooks.json", HOOKS)
    owned(agent, Path(agent.home) / ".codex" / "config.toml", TOML)
    rewrite = (f"printf '{{\"hooks\": {{}}}}' > {ws}/.codex/hooks.json; "
               f"printf '[features]\\nhooks = false\\n' > {ws}/.codex/config.toml; "
               f"printf '[features]\\nhooks = false\\n' > $HOME/.codex/config.toml")
    (answer,), _ = emit(boot, bash(ws, "rm -rf /tmp/x"), before=rewrite)
    assert answer.read.blocked and "the guard says no" in str(answer.read.reason), answer.raw
    assert "the guard says no twice" in str(answer.read.reason), answer.raw  # both held


PLANTS = ["fifo", "link to a root secret", "huge", "a directory", "garbage"]


@pytest.mark.parametrize("name", ["hooks.json", "config.toml"])
@pytest.mark.parametrize("how", PLANTS)
def test_what_the_agent_left_in_its_codex_files_blocks_and_shows_nothing(
        boot: Callable[..., Initd], agent: Agent, ws: Path, canary: Canary, name: str,
        how: str) -> None:
    """Left for this start in .codex/: each is a file initd cannot read or parse, which
    stands in as an error on the guard's event (invariant 12), names the file, and
    reaches neither root's secret nor the answer's text with it."""
    path = ws / ".codex" / name
    as_agent(agent, f"mkdir -p {path.parent} && rm -rf {path}")
    as_agent(agent, {"fifo": f"mkfifo {path}",
                     "link to a root secret": f"ln -s {canary.secret} {path}",
                     "huge": f"printf '%s' '{HOOKS}' > {path} && truncate -s 64M {path}",
                     "a directory": f"mkdir {path}",
                     "garbage": f"printf '{{[[ = \\001' > {path}"}[how])
    (answer,), log = emit(boot, bash(ws, "ls"))
    assert answer.read.blocked and name in str(answer.read.reason), answer.raw
    assert canary.token not in log + json.dumps(answer.raw)
    assert canary.changes() == []


def test_initds_line_with_more_shell_code_is_a_hook_that_runs(
        boot: Callable[..., Initd], agent: Agent, ws: Path) -> None:
    """``initd emit --from codex`` alone is the way in (not run: it would send the event
    back to initd); the same line with a redirection and ``; ... exit 2`` after it is a
    hook, and it runs: a command is never hidden behind initd's own line. (Its emit reads
    nothing, so it asks initd nothing: a hook that sent the event on would ask again.)"""
    line = f"{sys.executable} -m initd emit --from codex"
    owned(agent, Path(agent.home) / ".codex" / "hooks.json", json.dumps({"hooks": {
        "PreToolUse": [{"hooks": [
            {"type": "command", "command": line},
            {"type": "command", "command": f"{line} </dev/null; {GUARD}"}]}]}}))
    (answer,), _ = emit(boot, bash(ws, "ls"))
    assert answer.read.blocked and "the guard says no" in str(answer.read.reason), answer.raw


PATCHES = {
    "plain": "*** Add File: .env\n+TOKEN=1\n",
    "./": "*** Add File: ./.env\n+TOKEN=1\n",
    "through a folder": "*** Add File: src/../.env\n+TOKEN=1\n",
    "absolute": "*** Add File: {ws}/.env\n+TOKEN=1\n",
    "indented header": "   *** Add File: .env   \n+TOKEN=1\n",
    "CRLF": "*** Add File: .env\r\n+TOKEN=1\r\n",
    "an update": "*** Update File: .env\n@@\n-A=1\n+A=2\n",
    "a move onto it": "*** Update File: notes.env.txt\n*** Move to: .env\n@@\n-A\n+B\n",
}


@pytest.mark.parametrize("how", list(PATCHES))
def test_an_apply_patch_to_env_reaches_a_claude_write_guard(
        boot: Callable[..., Initd], agent: Agent, ws: Path, how: str) -> None:
    """A Claude Code guard on ``Write|Edit`` that refuses writes to .env (its
    ``tool_input.file_path``) holds for Codex's ``apply_patch``, however the patch names
    the file (Codex's parser reads a header trimmed, a path from the session's cwd)."""
    owned(agent, ws / ".claude" / "settings.json", json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": ENV_GUARD}]}]}}))
    body = PATCHES[how].format(ws=ws)
    sent = payload("PreToolUse", ws, tool_name="apply_patch", tool_input={
        "command": f"*** Begin Patch\n{body}*** End Patch\n"})
    (answer,), _ = emit(boot, sent)
    assert answer.read.blocked and f"{ws}/.env" in str(answer.read.reason), answer.raw


# a Claude Code guard of every file it is shown, in a log of the agent's: which files
# the guard saw, once each
SEEN_GUARD = ("f=$(python3 -c 'import json,sys; print(json.load(sys.stdin)"
              "[\"tool_input\"].get(\"file_path\", \"\"))'); echo \"$f\" >> {log}; "
              "case \"$f\" in */.env) echo \"no writes to $f\" >&2; exit 2;; esac; exit 0")


@pytest.mark.parametrize("where", ["second", "last of 40", "an update after adds"])
def test_a_patch_of_several_files_shows_a_claude_write_guard_each_one(
        boot: Callable[..., Initd], agent: Agent, ws: Path, where: str) -> None:
    """The .env after innocent files in one patch: a Claude Code guard sees one
    ``file_path`` a call, so each file the patch writes is a call of its own (a Write of
    the file it adds, an Edit of one it updates), and the guard saw every one of them."""
    log = Path(agent.home) / f"seen-{os.getpid()}-{where.replace(' ', '-')}"
    owned(agent, ws / ".claude" / "settings.json", json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Write|Edit", "hooks": [{"type": "command",
                                             "command": SEEN_GUARD.format(log=log)}]}]}}))
    count = {"second": 1, "last of 40": 39, "an update after adds": 3}[where]
    adds = "".join(f"*** Add File: f{i}.txt\n+hello\n" for i in range(count))
    last = ("*** Update File: .env\n@@\n-A=1\n+A=2\n" if where == "an update after adds"
            else "*** Add File: .env\n+TOKEN=1\n")
    sent = payload("PreToolUse", ws, tool_name="apply_patch", tool_input={
        "command": f"*** Begin Patch\n{adds}{last}*** End Patch\n"})
    try:
        (answer,), _ = emit(boot, sent)
        assert answer.read.blocked and f"{ws}/.env" in str(answer.read.reason), answer.raw
        seen = log.read_text().split()
    finally:
        log.unlink(missing_ok=True)
    assert sorted(seen) == sorted([*(f"{ws}/f{i}.txt" for i in range(count)), f"{ws}/.env"])


def test_a_patch_of_more_files_than_initd_shows_one_by_one_is_not_allowed(
        boot: Callable[..., Initd], agent: Agent, ws: Path) -> None:
    """A patch of thousands of files would be thousands of runs of every Write|Edit guard
    for one call: over the wire's cap (257 here), it is not allowed, and no guard is left
    unseen for it: the answer is Codex's block (exit 2, the reason on stderr)."""
    owned(agent, ws / ".claude" / "settings.json", json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": ENV_GUARD}]}]}}))
    adds = "".join(f"*** Add File: f{i}.txt\n+x\n" for i in range(257))
    sent = payload("PreToolUse", ws, tool_name="apply_patch", tool_input={
        "command": f"*** Begin Patch\n{adds}*** End Patch\n"})
    (answer,), _ = emit(boot, sent)
    assert answer.raw["code"] == 2 and answer.read.blocked, answer.raw
    assert "257 files" in answer.raw["err"], answer.raw


def test_a_hook_rewriting_one_file_of_several_denies_the_patch(
        boot: Callable[..., Initd], agent: Agent, ws: Path) -> None:
    """A Claude Code hook's ``updatedInput`` for one file (a Write of its own content) can
    be no patch of the several files the call writes: Codex gets a deny, never the first
    file's patch alone (which would drop the other files) nor the patch as it was."""
    rewrite = ("cat >/dev/null; echo '{\"hookSpecificOutput\": {\"hookEventName\": "
               "\"PreToolUse\", \"permissionDecision\": \"allow\", \"updatedInput\": "
               "{\"file_path\": \"" + str(ws) + "/a.txt\", \"content\": \"x\\n\"}}}'")
    owned(agent, ws / ".claude" / "settings.json", json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": rewrite}]}]}}))
    sent = payload("PreToolUse", ws, tool_name="apply_patch", tool_input={"command": (
        "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Add File: b.txt\n+b\n"
        "*** End Patch\n")})
    (answer,), _ = emit(boot, sent)
    assert answer.read.blocked and "one file of a patch of several" in str(
        answer.read.reason), answer.raw
