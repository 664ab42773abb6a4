"""The agent against Claude Code's filters (initd/events/claude/matchers.py): a deny hook with
``if: "Bash(rm *)"`` must run for every way bash lets it write ``rm``, through the real
engine and through ``initd emit pre_tool`` with initd as PID 1; a command the parser
cannot read runs it too (fail closed). A matcher made to backtrack for ever answers at
once and the service's health with it; one RE2 cannot run is a load error naming the
file, the group and the key. With ``--trust``, nothing of an unapproved settings file is
evaluated before the hook is refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from initd.events.claude import shellwords
from initd.events.claude.matchers import matcher
from tests.events.support import Workspace
from tests.hooks.support import forget_session
from tests.support.attack import Agent, agent_script

DENY = "cat >/dev/null; echo 'rm is not allowed here' >&2; exit 2"
# every spelling of `rm -rf x` bash runs as rm, one per line of the attack
BYPASSES = [
    "rm -rf x", "(rm -rf x)", "{ rm -rf x; }", "if true; then rm -rf x; fi",
    "time rm -rf x", "'rm' -rf x", '"rm" -rf x', "\\rm -rf x", "r''m -rf x", 'r""m -rf x',
    "$'\\x72m' -rf x", "$'\\162m' -rf x", "X='a b' rm -rf x", "cd x && (rm -rf x)",
    "echo $(rm -rf x)", "echo `rm -rf x`", 'echo "$(rm -rf x)"', "! rm -rf x",
    "true | rm -rf x | cat", "true |& rm -rf x", "while false; do :; done; rm -rf x",
    "while true; do rm -rf x; break; done", "until false; do rm -rf x; done",
    "for i in 1; do rm -rf x; done", "for ((i=0; i<1; i++)); do rm -rf x; done",
    "case a in a) rm -rf x;; esac", "f() { rm -rf x; }; f", "function g { rm -rf x; }",
    "cat <<EOF\n$(rm -rf x)\nEOF", "cat <<< \"$(rm -rf x)\"", "cat <(rm -rf x)",
    "echo $((1 + $(rm -rf x)))", "x=$(rm -rf x)", "export X=$(rm -rf x)",
    "[[ -n $(rm -rf x) ]]", "echo ${X:-$(rm -rf x)}", "echo >$(rm -rf x)",
    "env rm -rf x", "env -i A=1 rm -rf x", "env -u HOME -- rm -rf x", "command rm -rf x",
    "command -p rm -rf x", "builtin rm -rf x", "exec rm -rf x", "exec -a ls rm -rf x",
    "nohup rm -rf x &", "nice -n 5 rm -rf x", "nice -5 rm -rf x",
    "timeout -s KILL 5 rm -rf x", "timeout --sig KILL 5 rm -rf x", "stdbuf -oL rm -rf x",
    "noglob rm -rf x", "xargs rm -rf < list", "xargs -0 -n1 rm -rf < list",
    "sudo -u root rm -rf x", "setsid nohup nice rm -rf x", "coproc rm -rf x",
    "find . -name x -exec rm -rf {} \\;", "find . -execdir rm -rf {} +",
    "/bin/rm -rf x", "/usr/bin/env rm -rf x", '"$HOME"/../../bin/rm -rf x',
    "2>/dev/null rm -rf x", "rm >/dev/null -rf x", "r\\\nm -rf x",
    # what only the running shell knows: the hook runs
    "$CMD -rf x", "${CMD} -rf x", "$(echo rm) -rf x", "`echo rm` -rf x", "r? -rf x",
    "/bin/r[m] -rf x", "rm{,} -rf x", "$X/rm -rf x", 'eval "rm -rf x"',
    "bash -c 'rm -rf x'", "sh -xc 'rm -rf x'", "echo 'rm -rf x' | sh", "bash <<'EOF'\nrm\nEOF",
    "source /dev/stdin <<< 'rm -rf x'", "env -S 'rm -rf x'", "env $OPTS rm -rf x",
    "alias r='rm -rf'", "trap 'rm -rf x' EXIT", "xargs sh -c 'rm -rf x'",
]
# commands the parser cannot read (or reads unlike bash): the hook runs
UNREADABLE = ["rm -rf x &&", "(rm -rf x", "echo $(rm -rf x", "if true; then rm -rf x",
              "{rm,echo} -rf x", "echo 'open", "ls " + "a " * 40_000, "ls \ud800"]
# nothing here runs rm: the deny hook stays out of the way
HARMLESS = ["ls -la", "echo rm -rf x", "git commit -m 'rm -rf x'", "rmdir x",
            "command -v rm", "cat <<'EOF'\n$(rm -rf x)\nEOF", "grep -r 'rm -rf' .",
            "# rm -rf x", "bash build.sh"]


def bash(command: str) -> dict[str, Any]:
    return {"tool_name": "Bash", "tool_input": {"command": command}}


def deny_settings(directory: Path, hooks: dict[str, Any] | None = None,
                  owner: Agent | None = None, name: str = "settings.json") -> Path:
    path = directory / ".claude" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks or {"PreToolUse": [{
        "matcher": "Bash", "hooks": [{"type": "command", "if": "Bash(rm *)",
                                      "command": DENY}]}]}}))
    if owner is not None:
        for made in (path.parent, path):
            os.chown(made, owner.uid, owner.gid)
    return path


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Workspace]:
    """The hook service's engine on a workspace whose settings deny rm."""
    workspace = Workspace(tmp_path)
    workspace.home = str(tmp_path / "home")
    deny_settings(workspace.path)
    yield workspace
    if workspace.engine is not None:
        workspace.engine.shutdown()
    forget_session(workspace.sid)


@pytest.mark.parametrize("command", BYPASSES + UNREADABLE)
def test_every_spelling_of_rm_is_denied_through_the_engine(engine: Workspace,
                                                           command: str) -> None:
    out = engine.fire("PreToolUse", bash(command))
    assert out["blocked"] and out["permissionDecision"] == "deny", command
    assert out["reason"] == "rm is not allowed here"


@pytest.mark.parametrize("command", HARMLESS)
def test_what_runs_no_rm_is_left_alone(engine: Workspace, command: str) -> None:
    assert engine.fire("PreToolUse", bash(command))["results"] == []


EMIT = """
    import json, subprocess, sys
    for command in json.loads(sys.argv[1]):
        data = json.dumps({"tool_name": "Bash", "tool_input": {"command": command}})
        out = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data",
                              data], capture_output=True, text=True, timeout=60)
        print(json.dumps([command, out.returncode]), flush=True)
"""


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_agent_cannot_write_rm_past_a_deny_hook(boot, agent: Agent, ws: Path) -> None:
    """As the agent, with initd as PID 1: ``initd emit pre_tool`` for each spelling exits
    2 (blocked), for each harmless command 0."""
    deny_settings(ws, owner=agent)
    # (a lone surrogate cannot be an argument; over 64 KiB, the API refuses the body)
    commands = [c for c in BYPASSES + UNREADABLE if "\ud800" not in c and len(c) < 60_000]
    commands += HARMLESS
    init = boot(sys.executable, agent_script(EMIT), json.dumps(commands))
    assert init.wait(timeout=300) == 0, init.stderr
    codes = dict(json.loads(line) for line in init.stdout_lines)
    assert [c for c in commands if codes.get(c) != (0 if c in HARMLESS else 2)] == [], codes


FLOOD = """
    import json, sys, threading
    from tests.support.agent_side import call
    evil = sys.argv[1]
    answers = {}

    def fire(name):
        try:
            code, out = call("POST", "/v1/events/pre_tool", {"tool_name": name}, timeout=60)
            answers[name] = [code, [r["status"] for r in out["results"]]]
        except Exception as err:
            answers[name] = repr(err)

    firing = threading.Thread(target=fire, args=(evil,), daemon=True)
    firing.start()
    health = []
    for _ in range(3):  # while it may still be running, and after
        try:
            health.append(call("GET", "/v1/health", timeout=20)[0])
        except Exception as err:
            health.append(repr(err))
    firing.join(30)
    fire(evil + "a")  # 40 a's: the matcher matches, the hook runs
    print(json.dumps({"answers": answers, "health": health, "stuck": firing.is_alive()}))
"""


@pytest.mark.timeout(180)
def test_a_matcher_made_to_backtrack_answers_at_once(boot, agent: Agent, ws: Path,
                                                     image: str) -> None:
    """The agent's own settings: ``(a?){40}a{40}`` (passed the old bounds, then backtracked
    for ever on 39 a's, the service's health frozen with it) is RE2's, linear; and one
    RE2 cannot run is a load error that names the file, the group and the key."""
    path = deny_settings(ws, {"PreToolUse": [
        {"matcher": "(a?){40}a{40}", "hooks": [{"type": "command", "command": DENY}]},
        {"matcher": "(a+)+\\1", "hooks": [{"type": "command", "command": DENY}]}]},
        owner=agent, name="settings.local.json")
    init = boot(sys.executable, agent_script(FLOOD), "a" * 39)
    assert init.wait(timeout=120) == 0, init.stderr
    found = json.loads(init.stdout_lines[-1])
    assert not found["stuck"] and found["health"] == [200, 200, 200], found
    # (was: nothing for 39 a's, one result for 40. The group RE2 cannot run is a guard
    # initd could not load: it stands in, last, as an error that blocks PreToolUse,
    # whatever the tool: invariant 12)
    assert found["answers"] == {"a" * 39: [200, ["blocked"]],
                                "a" * 40: [200, ["blocked", "blocked"]]}, found
    from tests.support.attack import as_agent

    checked = as_agent(agent, f"{sys.executable} -m initd hooks check --workspace {ws} "
                              f"--hooks-dir {image}", check=False)
    assert checked.returncode == 1
    assert (f"{path}: hooks.PreToolUse[1].matcher: '(a+)+\\\\1': not a regular expression "
            "RE2 can run (invalid escape sequence: \\1)") in checked.stdout, checked.stdout


TRUSTED = """
    import json, sys
    from tests.support.agent_side import call
    for name in json.loads(sys.argv[1]):
        code, out = call("POST", "/v1/events/pre_tool", {"tool_name": name}, timeout=60)
        print(json.dumps([code, [[r["status"], r["error"]] for r in out["results"]]]),
              flush=True)
"""


@pytest.fixture
def evidence() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="initd-atk-evidence-"))
    os.chmod(path, 0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.timeout(180)
def test_an_unapproved_files_matcher_is_never_evaluated(boot, agent: Agent, ws: Path,
                                                        evidence: Path) -> None:
    """With ``--trust`` and nothing approved, the agent's own settings file: its matcher
    is one that backtracked for ever in the old engine (evaluated before trust, it froze
    the service), and its hook would leave evidence. The hook is refused, with its
    reason, for every PreToolUse, a tool name its matcher does not match included:
    trust decided before the matcher was looked at."""
    deny_settings(ws, {"PreToolUse": [{"matcher": "(a?){40}a{40}", "hooks": [
        {"type": "command", "command": f"touch {evidence}/ran"}]}]}, owner=agent)
    trust_file = Path(tempfile.mkdtemp(prefix="initd-atk-trust-")) / "trust.json"
    try:
        init = boot(sys.executable, agent_script(TRUSTED), json.dumps(["a" * 39, "a" * 40]),
                    more=("--trust", "--trust-file", str(trust_file)))
        assert init.wait(timeout=120) == 0, init.stderr
    finally:
        shutil.rmtree(trust_file.parent, ignore_errors=True)
    answers = [json.loads(line) for line in init.stdout_lines]
    assert [code for code, _ in answers] == [200, 200], answers
    for _, results in answers:
        assert len(results) == 1 and results[0][0] == "untrusted", answers
        assert "not approved as it is now" in results[0][1], answers
    assert not (evidence / "ran").exists()


# --- properties: any command the agent writes


SHELLISH = st.text(alphabet=st.sampled_from(list("rm -x'\"\\$`(){};|&<>\n#*?[]=!~,.0")),
                   max_size=300)


@settings(max_examples=300, deadline=None)
@given(st.one_of(SHELLISH, st.text(max_size=300)))
def test_any_command_gets_an_answer(command: str) -> None:
    """Whatever the agent writes, the rule answers True or False (never raises); what
    the parser cannot read is True."""
    rule = matcher("pre_tool", "Bash", "Bash(rm *)", "/ws", "/home")
    assert rule.matches(bash(command)) in (True, False)
    if shellwords.simple_commands(command) is None:
        assert rule.matches(bash(command)) is True


# a simple command's wrappers, then the compound contexts it is put in, one inside another
WRAPPERS = ["time {}", "nohup {}", "env A=1 {}", "command {}", "timeout 5 {}",
            "nice -n 5 {}", "exec {}", "{} 2>/dev/null", "2>&1 {}"]
CONTEXTS = ["! {}", "X='a b' {}", "( {} )", "{{ {}; }}", "if true; then {}; fi",
            "if false; then :; else {}; fi",
            "while false; do :; done; {}", "for i in 1 2; do {}; done",
            "case x in x) {};; esac", "echo $( {} )", "echo \"$( {} )\"", "true | {{ {}; }}",
            "{} | cat", "f() {{ {}; }}", "cd x && {}", "{} || true", "true; {}",
            "[[ -n $( {} ) ]]", "x=$( {} )", "cat <({})", "echo ${{X:-$( {} )}}",
            "until {}; do :; done", "{} & wait", "cat <<< \"$( {} )\""]
WORD = st.text(alphabet=st.sampled_from(list("abcxyz019./-_")), min_size=1, max_size=8)


def spelled(name: str, how: list[int]) -> str:
    """``name`` with each character quoted one of the ways bash reads as that character."""
    ways = [lambda c: c, lambda c: f"\\{c}", lambda c: f"'{c}'", lambda c: f'"{c}"',
            lambda c: f"$'\\x{ord(c):02x}'"]
    return "".join(ways[way](char) for char, way in zip(name, how, strict=True))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(how=st.lists(st.integers(0, 4), min_size=2, max_size=2),
       args=st.lists(WORD, max_size=4),
       wrapped=st.lists(st.sampled_from(WRAPPERS), max_size=3),
       nesting=st.lists(st.sampled_from(CONTEXTS), min_size=1, max_size=4))
def test_rm_in_any_shell_context_still_runs_the_hook(how: list[int], args: list[str],
                                                     wrapped: list[str],
                                                     nesting: list[str]) -> None:
    """``rm`` (each letter quoted at random) with random arguments, wrapped, put into
    random shell contexts one inside another, as long as bash can read the result
    (``bash -n``): the rule matches it (read by the parser, or failed closed)."""
    command = " ".join([spelled("rm", how), *args])
    for context in [*wrapped, *nesting]:
        command = context.format(command)
    assume(subprocess.run(["bash", "-n", "-c", command], capture_output=True).returncode == 0)
    assert matcher("pre_tool", "Bash", "Bash(rm *)", "/ws", "/home").matches(bash(command))


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Write", {}), ("Edit", {"file_path": None}), ("MultiEdit", {"file_path": ["x"]}),
    ("NotebookEdit", []), ("Read", {"file_path": 7})])
def test_a_path_rule_runs_its_hook_when_the_path_is_left_out(tool: str,
                                                              tool_input: object) -> None:
    """Invariant 12: a field the format always sends, left out or not text, is never a
    reason to skip a guard (Edit(*.env) on a Write without file_path once did)."""
    from initd.events.claude.matchers import rule_matches

    rule = "Read(*.env)" if tool == "Read" else "Edit(*.env)"
    assert rule_matches(rule, {"tool_name": tool, "tool_input": tool_input}, "/ws", "/home")
    # where the path is optional (Grep, Glob), a search of everything is not a file's
    assert not rule_matches("Read(*.env)", {"tool_name": "Grep", "tool_input": {}}, "/ws",
                            "/home")
