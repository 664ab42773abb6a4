"""Claude Code's matchers and ``if`` rules (initd/events/claude/matchers.py), by table, as the
hooks and permissions references give them; regular expressions are RE2's (what it cannot
compile is refused, and what it compiles answers in linear time on any payload); ``if``
is matched on every simple command a shell parser finds (test_wildcards.py has the
wildcards; tests/conformance and tests/security/test_claude_rules.py have the rest)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from initd.events.claude import matchers
from initd.events.claude.matchers import MatcherError, matcher, regex_problem
from tests.support import imports


def tool(name: str, **tool_input: object) -> dict[str, object]:
    return {"tool_name": name, "tool_input": tool_input}


@pytest.mark.parametrize(("text", "name", "expected"), [
    ("Bash", "Bash", True),
    ("Bash", "BashOutput", False),  # letters only: an exact name, never a prefix
    ("bash", "Bash", False),  # case-sensitive
    ("Edit|Write", "Write", True),
    ("Edit|Write", "MultiEdit", False),
    ("*", "anything", True),
    ("", "anything", True),
    ("mcp__.*", "mcp__memory__create_entities", True),
    ("mcp__memory__.*", "mcp__github__search", False),
    ("mcp__.*__write.*", "mcp__fs__write_file", True),
    ("mcp__memory", "mcp__memory__create_entities", False),  # "matches no tool" (the docs)
    ("^Notebook", "NotebookEdit", True),
    ("Notebook.*", "NotebookEdit", True),
    ("Notebook.*", "MyNotebookEdit", True),  # searched, as JavaScript's RegExp.test
    ("^(Edit|Write)$", "Edit", True),
])
def test_tool_matchers(text: str, name: str, expected: bool) -> None:
    assert matcher("pre_tool", text, None, "/ws", "/home").matches(tool(name)) is expected


@pytest.mark.parametrize(("event", "text", "payload", "expected"), [
    ("session_start", "startup", {"source": "startup"}, True),
    ("session_start", "startup", {"source": "resume"}, False),
    ("session_start", "startup|resume", {"source": "resume"}, True),
    ("session_start", "startup", {}, False),  # no source: only match-all matchers match
    ("session_start", "*", {}, True),
    ("pre_compact", "auto", {"trigger": "auto"}, True),
    ("pre_compact", "auto", {"trigger": "manual"}, False),
    ("notification", "idle_prompt", {"notification_type": "idle_prompt"}, True),
    ("notification", "permission_prompt", {"notification_type": "idle_prompt"}, False),
    ("session_end", "logout", {"reason": "logout"}, True),
    ("subagent_stop", "Explore", {"agent_type": "Explore"}, True),
    ("stop", "anything at all", {}, True),  # Stop has no matcher: ignored
    ("user_prompt_submit", "Bash", {"prompt": "x"}, True),
    ("pre_tool", "Bash", {"tool_name": 3}, False),
])
def test_matchers_per_event(event: str, text: str, payload: dict[str, object],
                            expected: bool) -> None:
    assert matcher(event, text, None, "/ws", "/home").matches(payload) is expected


@pytest.mark.parametrize(("rule", "payload", "expected"), [
    ("Bash(git commit:*)", tool("Bash", command="git commit -m 'x'"), True),
    ("Bash(git commit:*)", tool("Bash", command="git commit"), True),
    ("Bash(git commit:*)", tool("Bash", command="git commit-tree HEAD"), False),
    ("Bash(git commit:*)", tool("Bash", command="git  commit   -am x"), True),  # spaces
    ("Bash(git commit:*)", tool("Bash", command="git status && git commit -m x"), True),
    ("Bash(git commit:*)", tool("Bash", command="cd src; git commit -m x"), True),
    ("Bash(git commit:*)", tool("Bash", command="FOO=1 BAR=2 git commit -m x"), True),
    ("Bash(git commit:*)", tool("Bash", command="echo 'a && git commit -m x'"), False),
    ("Bash(git commit:*)", tool("Read", file_path="/x"), False),
    ("Bash(rm *)", tool("Bash", command="rm -rf /tmp/build"), True),
    ("Bash(rm *)", tool("Bash", command="rmdir x"), False),  # the space is a word boundary
    ("Bash(rm*)", tool("Bash", command="rmdir x"), True),
    ("Bash(npm test)", tool("Bash", command="npm test"), True),
    ("Bash(npm test)", tool("Bash", command="npm test --watch"), False),
    ("Bash(* --version)", tool("Bash", command="node --version"), True),
    ("Bash(git * main)", tool("Bash", command="git push origin main"), True),
    ("Bash(git * main)", tool("Bash", command="git log"), False),
    ("Bash(*)", tool("Bash", command="anything"), True),
    ("Bash", tool("Bash", command="anything"), True),
    ("Bash", tool("Bash"), True),
    ("Bash(ls *)", tool("Bash"), True),  # no command (always sent): the hook runs
    ("Bash(ls *)", tool("Bash", command=["ls"]), True),  # nor one that is not text
    ("Edit(*.ts)", tool("Edit", file_path="/ws/src/deep/a.ts"), True),
    ("Edit(*.ts)", tool("Write", file_path="/ws/a.ts"), True),  # Edit covers Write
    ("Edit(*.ts)", tool("Edit", file_path="/ws/a.js"), False),
    ("Edit(src/**)", tool("Edit", file_path="src/x/y.py"), True),  # relative: the project
    ("Edit(src/**)", tool("Edit", file_path="/ws/lib/y.py"), False),
    ("Edit(/docs/*.md)", tool("Edit", file_path="/ws/docs/a.md"), True),
    ("Read(//etc/**)", tool("Read", file_path="/etc/passwd"), True),
    ("Read(//etc/**)", tool("Grep", path="/etc"), False),  # /etc itself is not under it
    ("Read(~/.ssh/**)", tool("Read", file_path="/home/.ssh/id_rsa"), True),
    ("Read(./.env)", tool("Read", file_path="/ws/.env"), True),
    ("WebFetch(domain:*.example.com)", tool("WebFetch", url="https://api.example.com/x"),
     True),
    ("WebFetch(domain:example.com)", tool("WebFetch", url="https://evil.com/example.com"),
     False),
    ("WebFetch(domain:example.com)", tool("WebFetch", url="http://[::1"), True),  # unread
    ("WebFetch(domain:example.com)", tool("WebFetch"), True),  # the url, always sent
    ("mcp__memory", tool("mcp__memory__create_entities"), True),
    ("mcp__memory__*", tool("mcp__memory__create_entities"), True),
    ("mcp__memory", tool("mcp__github__search"), False),
])
def test_if_rules(rule: str, payload: dict[str, object], expected: bool) -> None:
    matchers.check_rule(rule)
    assert matcher("pre_tool", "", rule, "/ws", "/home").matches(payload) is expected


def test_if_never_runs_on_an_event_without_tools() -> None:
    assert not matcher("stop", "", "Bash", "/ws", "/home").matches(tool("Bash"))


@pytest.mark.parametrize(("rule", "message"), [
    ("Agent(Explore)", "initd evaluates Agent(...) only for Bash"),
    ("WebFetch(example.com)", "WebFetch(...) takes domain:HOST"),
    ("Bash(unclosed", "expected a permission rule"),
    ("", "expected a permission rule"),
])
def test_rules_initd_cannot_evaluate_are_refused(rule: str, message: str) -> None:
    with pytest.raises(MatcherError, match=message.replace("(", r"\(").replace(")", r"\)")):
        matchers.check_rule(rule)


@pytest.mark.parametrize(("pattern", "problem"), [
    ("(?=a)b", "invalid perl operator: (?="),  # lookarounds: backtracking engines only
    ("(?<!x)y", "invalid perl operator: (?<"),
    ("(a+)+\\1", "invalid escape sequence: \\1"),  # backreferences too
    ("a{1001}", "invalid repetition size"),
    ("((a{100}){100}){100}", "invalid repetition size"),
    ("a." * 150, "at most 256"),
    ("[", "missing ]"),
])
def test_regexes_re2_cannot_run_are_refused(pattern: str, problem: str) -> None:
    found = regex_problem(pattern)
    assert found is not None and problem in found, found
    with pytest.raises(MatcherError):
        matcher("pre_tool", pattern, None, "/ws", "/home")


@pytest.mark.parametrize("pattern", ["mcp__.*__write.*", "^Notebook", "[(|)+]*x",
                                     r"Edit\|Write.*", "(Edit|Write)", "a{2,3}b?",
                                     "(ab)?c+", "x*x*x*x*y", "(a+)+$", "(a|aa)*b",
                                     "(a?){40}a{40}", "(?<name>x)", "(?P<n>x)"])
def test_ordinary_and_once_dangerous_regexes_load(pattern: str) -> None:
    assert regex_problem(pattern) is None


def test_regexes_are_searched_as_javascript_does() -> None:
    """RegExp.test: a match anywhere; ``$`` is the end of the value (not before a last
    newline, as Python's re has it)."""
    assert matcher("pre_tool", "^Bash$", None, "/ws", "/home").matches(tool("Bash"))
    assert not matcher("pre_tool", "^Bash$", None, "/ws", "/home").matches(tool("Bash\n"))
    assert matcher("pre_tool", "Edit.*", None, "/ws", "/home").matches(tool("NotebookEdit"))
    # a value that cannot be searched (a lone surrogate) runs the hook: fail closed
    assert matcher("pre_tool", "^x.*", None, "/ws", "/home").matches(tool("\ud800"))


def test_what_is_admitted_answers_on_any_payload() -> None:
    """The backtracking shapes the old bounds refused, and the one they let through
    (``(a?){40}a{40}``, 20 s and more in a backtracking engine), on the values that make
    a backtracking engine blow up, and a huge tool name and command (the agent writes the
    payload): all answer before a generous deadline."""
    done = threading.Event()
    answers: list[bool] = []

    def run() -> None:
        for pattern, value in (("(a?){40}a{40}", "a" * 39), ("(a+)+$", "a" * 64 + "!"),
                               (r"\w*\w*\w*[^x]", "x" * 10_000_000)):
            answers.append(matcher("pre_tool", pattern, None, "/ws", "/home").matches(
                tool(value)))
        answers.append(matcher("pre_tool", "", "Bash(* a * b * c * d *)", "/ws",
                               "/home").matches(tool("Bash", command="a b c " * 10_000)))
        done.set()

    threading.Thread(target=run, daemon=True).start()
    assert done.wait(timeout=60), "a matcher is still running"
    assert answers == [False, False, False, False]


def test_the_parsers_are_imported_only_where_a_rule_needs_them(tmp_path: Path) -> None:
    """PID 1 and the supervisor never import RE2 or tree-sitter (``-X importtime`` of a
    boot over a workspace whose settings have both kinds of filter); the hook service
    imports tree-sitter when a Bash rule is first evaluated, RE2 when a regular
    expression is first compiled."""
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "^Ba.h$", "hooks": [{"type": "command", "command": "true",
                                         "if": "Bash(rm *)"}]}]}}))
    heavy = {"re2", "tree_sitter", "tree_sitter_bash", "initd.events.claude.shellwords"}
    imported = imports.imported("--state-dir", str(tmp_path / "state"), "--hooks-dir",
                                str(tmp_path / "none"), "--no-service", "--workspace",
                                str(ws), "--", "true", cwd=ws)
    assert "initd.cli" in imported and imported & heavy == set()
    probe = textwrap.dedent("""\
        import sys
        from initd.events.claude import matchers
        def loaded():
            return sorted(m for m in ("re2", "tree_sitter") if m in sys.modules)
        rule = matchers.matcher("pre_tool", "Bash", "Bash(rm *)", "/ws", "/home")
        rule.matches({"tool_name": "Read", "tool_input": {}})
        print(loaded())
        rule.matches({"tool_name": "Bash", "tool_input": {"command": "cd x && rm y"}})
        print(loaded())
        matchers.matcher("pre_tool", "^Ba.h$", None, "/ws", "/home")
        print(loaded())
        """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60, check=True).stdout.splitlines()
    assert out == ["[]", "['tree_sitter']", "['re2', 'tree_sitter']"]


@pytest.mark.parametrize("command", ['rm -$"rf" /tmp/x', 'git push -$"-force"', "rm x$ -rf",
                                     "echo \\ #; rm -rf /tmp/x; git push --force"])
def test_a_word_the_grammar_reads_otherwise_than_bash_runs_the_hook(command: str) -> None:
    """``-$"rf"`` is ``-rf`` to bash; the grammar once left its ``-`` out, and an ``if``
    of ``Bash(rm -rf *)`` let ``rm -$"rf" /tmp/x`` through (test_shellwords.py)."""
    for rule in ("Bash(rm -rf *)", "Bash(git push --force*)"):
        assert matcher("pre_tool", "Bash", rule, "/ws", "/home").matches(
            {"tool_name": "Bash", "tool_input": {"command": command}})
