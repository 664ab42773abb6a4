"""Claude Code's matchers and ``if`` rules (initd/events/matchers.py), by table, as the
hooks and permissions references give them; regular expressions that could backtrack for
ever are refused, and what is admitted stays fast on any payload."""

from __future__ import annotations

import time

import pytest

from initd.events import matchers
from initd.events.matchers import MatcherError, matcher, regex_problem, wildcard


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
    ("Bash(ls *)", tool("Bash"), False),  # no command: nothing to match
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


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("git *", "git", True), ("git *", "gitk", False), ("* install", "npm install", True),
    ("a\\*b", "a*b", True), ("a\\*b", "axb", False), ("*", "", True),
    ("a*b*c", "abc", True), ("a*b*c", "acb", False), ("ab*ba", "aba", False),
])
def test_wildcards(pattern: str, text: str, expected: bool) -> None:
    assert wildcard(pattern, text) is expected


@pytest.mark.parametrize(("pattern", "problem"), [
    ("(a+)+$", "can take exponential time"),
    ("(a|aa)*b", "can take exponential time"),
    ("(?:x*)*y", "can take exponential time"),
    ("((ab)*)+", "can take exponential time"),
    ("x*x*x*x*y", "at most 3"),
    ("a." * 150, "at most 256"),
    ("[", "not a regular expression initd can read"),
    ("(?<name>x)", "not a regular expression initd can read"),  # JavaScript's syntax
])
def test_dangerous_or_bad_regexes_are_refused(pattern: str, problem: str) -> None:
    found = regex_problem(pattern)
    assert found is not None and problem in found
    with pytest.raises(MatcherError):
        matcher("pre_tool", pattern, None, "/ws", "/home")


@pytest.mark.parametrize("pattern", ["mcp__.*__write.*", "^Notebook", "[(|)+]*x",
                                     r"Edit\|Write.*", "(Edit|Write)", "a{2,3}b?",
                                     "(ab)?c+", "x*x*x*y"])
def test_ordinary_regexes_load(pattern: str) -> None:
    assert regex_problem(pattern) is None


def test_what_is_admitted_is_fast_on_any_payload() -> None:
    """The worst admitted shape on the longest value matched, and a huge tool name (the
    agent writes the payload): both answer at once."""
    worst = matcher("pre_tool", r"\w*\w*\w*[^x]", None, "/ws", "/home")
    started = time.monotonic()
    assert not worst.matches(tool("x" * matchers.SUBJECT_LIMIT))
    assert not worst.matches(tool("x" * 10_000_000))  # over the limit: never matched
    assert not matcher("pre_tool", "", "Bash(* a * b * c * d *)", "/ws", "/home").matches(
        tool("Bash", command="a b c " * 200_000))
    assert time.monotonic() - started < 2.0
