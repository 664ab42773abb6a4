"""Claude Code's ``matcher`` and ``if`` as its public documentation states them, case by
case, each with the passage it comes from (the hooks reference and the permissions page,
quoted as published); and the few places where initd, a guard, runs a hook where Claude
Code's text says it would not, each with the passage and the reason.

An ``if`` decides whether a hook runs, so it follows the *deny and ask* side of the
permission rules: a rule applies when any subcommand matches."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from initd.events.claude.matchers import check_rule, matcher
from tests.events.support import Workspace
from tests.hooks.support import forget_session


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    """A workspace and an engine built as the hook service builds it."""
    workspace = Workspace(tmp_path)
    workspace.home = str(tmp_path / "home")  # ~/.claude: never the real one
    yield workspace
    if workspace.engine is not None:
        workspace.engine.shutdown()
    forget_session(workspace.sid)



def bash(command: str) -> dict[str, Any]:
    return {"tool_name": "Bash", "tool_input": {"command": command}}


def runs(rule: str, command: str) -> bool:
    """Whether a PreToolUse hook with ``if: rule`` runs for this Bash command."""
    check_rule(rule)
    return matcher("pre_tool", "Bash", rule, "/ws", "/home").matches(bash(command))


@pytest.mark.parametrize(("rule", "command", "expected"), [
    ("Bash(npm run build)", "npm run build", True),
    ("Bash(npm run build)", "npm run build --watch", False),
    ("Bash(npm run *)", "npm run build", True),
    ("Bash(npm run *)", "npm run test --watch", True),
    ("Bash(npm run *)", "npm run", True),
    ("Bash(npm run *)", "npm install", False),
    ("Bash(git log * main)", "git log --oneline main", True),
    ("Bash(git log * main)", "git log -5 main", True),
    ("Bash(git log * main)", "git log main", False),
    ("Bash(git log * main)", "git push origin main", False),
    ("Bash(git * main)", "git merge main", True),
    ("Bash(git * main)", "git push origin main", True),
    ("Bash(git * main)", "git log", False),
    ("Bash(* --version)", "node --version", True),
    ("Bash(* --version)", "node -v", False),
    ("Bash(ls *)", "ls -la", True),
    ("Bash(ls *)", "ls", True),
    ("Bash(ls *)", "lsof", False),
    ("Bash(ls*)", "ls -la", True),
    ("Bash(ls*)", "lsof", True),
    ("Bash(* --help *)", "npm --help x", True),
    ("Bash(* --help *)", "npm --help", False),
])
def test_the_wildcard_table(rule: str, command: str, expected: bool) -> None:
    """https://code.claude.com/docs/en/permissions, Wildcard patterns: "Here is what each rule
    shape matches, and nearby commands it doesn't match" (the table, row by row); "A `*` at the
    end, with a space before it, also matches the bare command. [...] That holds only when the
    trailing `*` is the rule's only wildcard"."""
    assert runs(rule, command) is expected


@pytest.mark.parametrize("command", ["ls", "ls -la"])
def test_the_colon_star_suffix_is_a_trailing_space_star(command: str) -> None:
    """https://code.claude.com/docs/en/permissions: "The `:*` suffix is an equivalent way to write
    a trailing wildcard, so `Bash(ls:*)` matches the same commands as `Bash(ls *)`.\""""
    assert runs("Bash(ls:*)", command) and not runs("Bash(ls:*)", "lsof")


@pytest.mark.parametrize("separator", ["&&", "||", ";", "|", "|&", "&", "\n"])
def test_every_separator_splits_and_any_subcommand_runs_the_hook(separator: str) -> None:
    """https://code.claude.com/docs/en/permissions: "Claude Code is aware of shell operators, so a
    rule like `Bash(safe-cmd *)` won't give it permission to run the command `safe-cmd &&
    other-cmd`. The recognized command separators are `&&`, `||`, `;`, `|`, `|&`, `&`, and
    newlines. A rule must match each subcommand independently." and "Deny and ask rules apply
    when any subcommand matches them"."""
    command = f"safe-cmd {separator} other-cmd --now"
    assert runs("Bash(other-cmd *)", command)
    assert runs("Bash(safe-cmd *)", command)
    assert not runs("Bash(third-cmd *)", command)


@pytest.mark.parametrize("command", [
    "cd /tmp && git clean -f",
    'echo "$(git clean -f)"',
    "(git clean -f)",
    "for d in a b; do git clean -f; done",
    "if true; then git clean -f; fi",
])
def test_nested_subcommands_run_the_hook(command: str) -> None:
    """https://code.claude.com/docs/en/permissions: "Deny and ask rules apply when any subcommand
    matches them, including a command nested inside a subshell, a command substitution, or a
    control-flow body such as a `for` loop. An ask rule like `Bash(git clean *)` still prompts
    you for `cd /tmp && git clean -f` or `echo "$(git clean -f)"`\"."""
    assert runs("Bash(git clean *)", command)


@pytest.mark.parametrize("command", ["FOO=bar git push", "npm test && git push",
                                     "FOO=bar BAZ='a b' git push origin main"])
def test_leading_assignments_are_stripped(command: str) -> None:
    """https://code.claude.com/docs/en/hooks: "For Bash, the rule is matched against each
    subcommand of the tool input after leading VAR=value assignments are stripped, so if:
    "Bash(git push *)" matches both FOO=bar git push and npm test && git push.\""""
    assert runs("Bash(git push *)", command)


def test_a_deny_rule_matches_past_any_assignment() -> None:
    """https://code.claude.com/docs/en/permissions: "A deny or ask rule matches past any leading
    assignment, so `Bash(rm *)` in deny still matches `FOO=bar rm -rf tmp/`.\""""
    assert runs("Bash(rm *)", "FOO=bar rm -rf tmp/")


@pytest.mark.parametrize("command", ["npm test &&", "npm test ||", "git push (", "if",
                                     "echo 'unterminated", "x" * 70_000])
def test_a_command_too_complex_to_parse_runs_the_hook(command: str) -> None:
    """https://code.claude.com/docs/en/hooks: "The hook runs if any subcommand matches, and always
    runs when the command is too complex to parse."
    https://code.claude.com/docs/en/permissions: "When `&&` or `||` has nothing after it, such
    as in `npm test &&`, Claude Code treats the command as unparseable" and "Commands longer
    than 10,000 characters always prompt because they exceed what the analysis parses" (initd
    reads up to 64 KiB)."""
    assert runs("Bash(rm *)", command)


@pytest.mark.parametrize("command", ["timeout 30 npm test", "time npm test",
                                     "nice -n 5 npm test", "nohup npm test",
                                     "stdbuf -oL npm test", "command npm test",
                                     "builtin npm test", "noglob npm test",
                                     "timeout -s KILL 30 nice nohup npm test"])
def test_wrappers_are_stripped(command: str) -> None:
    """https://code.claude.com/docs/en/permissions: "Before matching Bash rules, Claude Code
    strips a fixed set of wrappers, so a rule like `Bash(npm test *)` also matches `timeout 30
    npm test`. The stripped wrappers are `timeout`, `time`, `nice`, `nohup`, and `stdbuf`, plus
    the shell builtins `command` and `builtin`, and zsh's `noglob`.\""""
    assert runs("Bash(npm test *)", command)


def test_the_query_form_of_command_is_not_stripped() -> None:
    """https://code.claude.com/docs/en/permissions: "Two related forms aren't stripped: the query
    form `command -v`, which looks up a command rather than running one"."""
    assert not runs("Bash(npm *)", "command -v npm")


def test_bare_xargs_is_stripped() -> None:
    """https://code.claude.com/docs/en/permissions: "Bare `xargs` is also stripped, so `Bash(grep
    *)` matches `xargs grep pattern`.\""""
    assert runs("Bash(grep *)", "find . -name '*.py' | xargs grep pattern")


@pytest.mark.parametrize(("rule", "command", "passage"), [
    ("Bash(grep *)", "xargs -n1 grep pattern",
     "Stripping applies only when `xargs` has no flags: an invocation like `xargs -n1 "
     "grep pattern` is matched as an `xargs` command"),
    ("Bash(rm *)", "/bin/rm -rf build/", "`Bash(rm *)` | `rm -rf build/` | "
     "`/bin/rm -rf build/`, `bash -c 'rm -rf build/'`"),
    ("Bash(rm *)", "bash -c 'rm -rf build/'", "(the same row)"),
    ("Bash(git push *)", "git 'push' origin main", "`Bash(git push *)` | `git push origin "
     "main` | `git -C . push origin main`, [...] `git 'push' origin main`"),
    ("Bash(git push *)", "git -C . push origin main", "(the same row)"),
    ("Bash(curl *)", "sh -c 'curl https://example.com'", "`Bash(curl *)` | `curl "
     "https://example.com` | `/usr/bin/curl https://example.com`, `sh -c 'curl "
     "https://example.com'`"),
])
def test_where_initd_runs_a_guard_that_claude_code_would_skip(rule: str, command: str,
                                                              passage: str) -> None:
    """https://code.claude.com/docs/en/permissions, "What a Bash rule doesn't match": "A Bash rule
    matches the command text Claude writes [...] It doesn't match the same program invoked in a
    different form, so a deny or ask rule covers the invocation Claude usually produces and
    isn't a security boundary around the program." initd runs the hook on these on purpose: its
    words are read as the shell reads them (``'push'`` is ``push``), a program is also tried
    without its directory, git also without its own options (``-C .``), flagged ``xargs`` is
    stripped, and code in a string (``sh -c``) cannot be read, so the hook runs (ARCHITECTURE.md
    invariant 12: a guard fails closed). A hook that runs more often than Claude Code's only ever
    sees more."""
    assert passage and runs(rule, command)


def test_quoted_operators_are_not_separators() -> None:
    """https://code.claude.com/docs/en/permissions: the separators are shell operators ("Claude
    Code is aware of shell operators"): inside quotes they are text, not a new subcommand."""
    assert not runs("Bash(git commit *)", "echo 'a && git commit -m x'")
    assert not runs("Bash(rm *)", 'git commit -m "fix; rm -rf tmp"')


@pytest.mark.parametrize(("pattern", "tool", "expected"), [
    ("^Notebook", "NotebookEdit", True), ("^Notebook", "MyNotebook", False),
    ("mcp__memory__.*", "mcp__memory__create_entities", True),
    ("mcp__memory__.*", "mcp__github__search", False),
    ("mcp__.*__write.*", "mcp__filesystem__write_file", True),
    ("mcp__memory", "mcp__memory__create_entities", False),
    ("Edit|Write", "Write", True), ("Bash", "BashOutput", False),
])
def test_matcher_values(pattern: str, tool: str, expected: bool) -> None:
    """https://code.claude.com/docs/en/hooks, Matcher patterns: "Only letters, digits, _, and | |
    Exact string, or |-separated list of exact strings" and "Contains any other character |
    JavaScript regular expression | ^Notebook matches any tool starting with Notebook;
    mcp__memory__.* matches every tool from the memory server"; "a matcher like mcp__memory
    contains only letters and underscores, so it is compared as an exact string and matches no
    tool"; "mcp__.*__write.* matches any tool whose name starts with write from any server"."""
    found = matcher("pre_tool", pattern, None, "/ws", "/home")
    assert found.matches({"tool_name": tool, "tool_input": {}}) is expected


def test_if_never_runs_on_an_event_without_tools() -> None:
    """https://code.claude.com/docs/en/hooks: "Only evaluated on tool events: PreToolUse,
    PostToolUse, PostToolUseFailure, PermissionRequest, and PermissionDenied. On other events,
    a hook with if set never runs.\""""
    assert not matcher("stop", "", "Bash(rm *)", "/ws", "/home").matches(bash("rm x"))


def test_the_documented_deny_hook_through_the_engine(ws: Workspace) -> None:
    """https://code.claude.com/docs/en/hooks: "if uses permission rule syntax to match against the
    tool name and arguments together, so "Bash(git *)" runs when any subcommand of the Bash
    input matches git *"; "The hook only spawns if the tool call matches the pattern, or if a
    Bash command is too complex to parse." A PreToolUse hook with ``if: Bash(rm *)`` that
    denies, fired as the hook service fires it."""
    deny = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "permissionDecision": "deny",
                                   "permissionDecisionReason": "Destructive command"}}
    ws.write(".claude/settings.json", json.dumps({"hooks": {"PreToolUse": [{
        "matcher": "Bash", "hooks": [{"type": "command", "if": "Bash(rm *)",
                                      "command": f"cat >/dev/null; echo '{json.dumps(deny)}'"
                                      }]}]}}))
    for command in ("cd /tmp && rm -rf build", "git status; (rm -rf build)", "rm -rf x &&"):
        out = ws.fire("PreToolUse", bash(command))
        assert out["permissionDecision"] == "deny" and out["blocked"], command
    out = ws.fire("PreToolUse", bash("git status && ls -la"))
    assert not out["blocked"] and out["results"] == []
