"""Which hooks of ``.gemini/settings.json`` run, in what order, for how long: matchers (a
regex for tool events, an exact string for lifecycle events, "*" and "" for all),
sequential and parallel definitions, timeouts in milliseconds, several answers merged.

Reference: https://geminicli.com/docs/hooks/ and https://geminicli.com/docs/hooks/reference
(as shipped in @google/gemini-cli@0.61.0 = gemini-cli git 5411f113, 2026-08-21); the
engine of @google/gemini-cli-core@0.61.0 (dist/src/hooks/hookPlanner.js, hookRunner.js,
hookAggregator.js) where the documentation is silent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conformance.claude_hooks_support import q
from tests.conformance.gemini_hooks_support import (
    GeminiSession,
    exits,
    group,
    hook,
    payload,
    says,
    settings,
    tool,
)

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def gs(tmp_path: Path) -> Iterator[GeminiSession]:
    session = GeminiSession(tmp_path)
    try:
        yield session
    finally:
        session.stop()


def recorders(gs: GeminiSession, event: str, matchers: dict[str, str | None]) -> None:
    """One definition per matcher, each a hook recording under its own name."""
    gs.gemini_project(settings(**{event: [
        group(hook(gs.record(name) + "; echo '{}'", name=name), matcher=matcher)
        for name, matcher in matchers.items()]}))
    gs.start()


TOOL_MATCHERS: dict[str, str | None] = {
    "exact": "run_shell_command", "alternation": "write_file|replace",
    "prefix": "read_.*", "star": "*", "empty": "", "none": None,
    "anchored_read": "^read_file$", "mcp": "mcp_github_.*",
}


@pytest.mark.parametrize("name, ran", [
    ("run_shell_command", {"exact", "star", "empty", "none"}),
    ("write_file", {"alternation", "star", "empty", "none"}),
    ("replace", {"alternation", "star", "empty", "none"}),
    ("read_file", {"prefix", "anchored_read", "star", "empty", "none"}),
    ("read_many_files", {"prefix", "star", "empty", "none"}),
    ("mcp_github_create_issue", {"mcp", "star", "empty", "none"}),
])
def test_tool_matchers_are_regular_expressions(gs: GeminiSession, name: str,
                                               ran: set[str]) -> None:
    """HOOKS "Matchers": "Tool events (BeforeTool, AfterTool): Matchers are Regular
    Expressions. (for example, "write_.*")"; "Wildcards: "*" or "" (empty string) matches
    all occurrences"; REFERENCE: "matcher: "read_.*" matches all file reading tools";
    "MCP Tools: Tools from MCP servers follow the naming pattern
    mcp_<server_name>_<tool_name>"; a definition without a matcher runs for every tool
    (CORE hookPlanner: "No matcher means match all")."""
    recorders(gs, "BeforeTool", TOOL_MATCHERS)
    gs.gemini(tool(gs, name))
    assert {n for n in TOOL_MATCHERS if gs.runs(n)} == ran


def test_after_tool_matchers_match_the_tool_too(gs: GeminiSession) -> None:
    """REFERENCE "Matchers and tool names": "For BeforeTool and AfterTool events, the
    matcher field in your settings is compared against the name of the tool"."""
    recorders(gs, "AfterTool", {"shell": "run_shell_command", "write": "write_file"})
    gs.gemini(payload(gs, "AfterTool"))
    assert gs.runs("shell") == 1 and gs.runs("write") == 0


def test_a_tool_regex_is_not_anchored(gs: GeminiSession) -> None:
    """CORE hookPlanner.matchesToolName: `new RegExp(matcher).test(toolName)`, a search,
    not a full match: "shell" matches run_shell_command; "^shell" does not."""
    recorders(gs, "BeforeTool", {"inner": "shell", "anchored": "^shell"})
    gs.gemini(tool(gs, "run_shell_command", command="ls"))
    assert gs.runs("inner") == 1 and gs.runs("anchored") == 0


@pytest.mark.parametrize("event, value, ran", [
    ("SessionStart", {"source": "startup"}, {"startup", "star"}),
    ("SessionStart", {"source": "resume"}, {"resume", "star"}),
    ("SessionEnd", {"reason": "clear"}, {"clear", "star"}),
    ("PreCompress", {"trigger": "manual"}, {"manual", "star"}),
])
def test_lifecycle_matchers_are_exact_strings(gs: GeminiSession, event: str,
                                              value: dict[str, str], ran: set[str]) -> None:
    """HOOKS "Matchers": "Lifecycle events: Matchers are Exact Strings. (for example,
    "startup")"; REFERENCE "matcher: A regex (for tools) or exact string (for lifecycle)":
    "start.*" is not a regex here and matches no source."""
    matchers: dict[str, str | None] = {
        "startup": "startup", "resume": "resume", "clear": "clear", "exit": "exit",
        "manual": "manual", "auto": "auto", "star": "*", "regexish": "start.*|.*"}
    recorders(gs, event, matchers)
    gs.gemini(payload(gs, event, **value))
    assert {n for n in matchers if gs.runs(n)} == ran


def test_a_sequential_definition_runs_its_hooks_one_after_another(gs: GeminiSession) -> None:
    """REFERENCE "Hook definition": "sequential: If true, hooks in this group run one after
    another." The second hook starts after the first has ended."""
    first = gs.out / "first.done"
    gs.gemini_project(settings(BeforeTool=group(
        hook(f"cat >/dev/null; sleep 1; touch {q(first)}; echo '{{}}'", name="one"),
        hook(f"test -e {q(first)} && {gs.record('second')}; echo '{{}}'", name="two"),
        sequential=True)))
    gs.start()
    gs.gemini(tool(gs, "run_shell_command", command="ls"))
    assert gs.runs("second") == 1, "the second hook ran before the first had ended"


def test_a_sequential_hook_sees_the_tool_input_its_predecessor_rewrote(
        gs: GeminiSession) -> None:
    """CORE hookRunner.executeHooksSequential/applyHookOutputToInput: in a sequential
    BeforeTool run, a hook's hookSpecificOutput.tool_input is merged into the next hook's
    tool_input (REFERENCE: tool_input "merges with and overrides the model's arguments")."""
    rewrite = {"hookSpecificOutput": {"hookEventName": "BeforeTool",
                                      "tool_input": {"command": "ls -la"}}}
    gs.gemini_project(settings(BeforeTool=group(
        hook("cat >/dev/null; " + says(rewrite), name="rewrite"),
        hook(gs.record("after") + "; echo '{}'", name="after"), sequential=True)))
    gs.start()
    done = gs.gemini(tool(gs, "run_shell_command", command="ls", dir_path="src"))
    assert gs.seen("after")["tool_input"] == {"command": "ls -la", "dir_path": "src"}, done


def test_without_sequential_the_hooks_run_in_parallel(gs: GeminiSession) -> None:
    """REFERENCE "Hook definition": "If false, they run in parallel." (the default: CORE
    hookPlanner runs an event sequentially only when a matching definition says
    sequential: true). Each hook waits for the other to have started."""
    def meet(me: str, other: str) -> str:
        mine, theirs = gs.out / f"{me}.started", gs.out / f"{other}.started"
        return (f"cat >/dev/null; touch {q(mine)}; for i in $(seq 200); do "
                f"test -e {q(theirs)} && {{ touch {q(gs.out / (me + '.met'))}; break; }}; "
                "sleep 0.1; done; echo '{}'")
    gs.gemini_project(settings(BeforeTool=[group(hook(meet("a", "b"), name="a")),
                                           group(hook(meet("b", "a"), name="b"))]))
    gs.start()
    gs.gemini(tool(gs, "run_shell_command", command="ls"))
    assert (gs.out / "a.met").exists() and (gs.out / "b.met").exists()


def test_a_timeout_is_in_milliseconds(gs: GeminiSession) -> None:
    """REFERENCE "Hook configuration": "timeout: Execution timeout in milliseconds
    (default: 60000)". A hook of "timeout": 1500 that sleeps 60 s is ended after 1.5 s,
    not 1500 s: the answer comes well inside the test's deadline."""
    gs.gemini_project(settings(BeforeTool=group(hook(
        gs.record("slow") + "; sleep 60; echo '{}'", timeout=1500))))
    gs.start()
    gs.gemini(tool(gs, "run_shell_command", command="ls"), timeout=45)
    assert gs.runs("slow") == 1


def test_a_hook_inside_its_timeout_is_heard(gs: GeminiSession) -> None:
    """REFERENCE "timeout: Execution timeout in milliseconds": "timeout": 8000 gives a hook
    8 s; one that answers after 1 s blocks with exit 2 (not cut short as if 8000 were a
    smaller unit)."""
    gs.gemini_project(settings(BeforeTool=group(hook(
        "cat >/dev/null; sleep 1; " + exits(2, "slow but sure"), timeout=8000))))
    gs.start()
    answer = gs.ask(tool(gs, "run_shell_command", command="rm -rf /"))
    assert answer.blocked and "slow but sure" in answer.reason, answer


def test_one_deny_among_allows_blocks_and_the_reasons_are_joined(gs: GeminiSession) -> None:
    """CORE hookAggregator.mergeWithOrDecision (BeforeTool, AfterTool, BeforeAgent,
    AfterAgent, SessionStart): a block or deny from any hook wins, reasons are joined;
    HOOKS: "when a hook event fires, Gemini CLI waits for all matching hooks"."""
    gs.gemini_project(settings(BeforeTool=[
        group(hook("cat >/dev/null; " + says({"decision": "allow"}), name="ok")),
        group(hook("cat >/dev/null; " + says({"decision": "deny", "reason": "first no"}),
                   name="no1"), matcher="run_shell_command"),
        group(hook("cat >/dev/null; " + exits(2, "second no"), name="no2"))]))
    gs.start()
    answer = gs.ask(tool(gs, "run_shell_command", command="rm -rf build"))
    assert answer.valid and answer.blocked, answer
    assert "first no" in answer.reason and "second no" in answer.reason, answer


def test_contexts_of_several_hooks_are_all_added(gs: GeminiSession) -> None:
    """CORE hookAggregator.extractAdditionalContext: every hook's additionalContext is kept
    (joined by newlines); REFERENCE BeforeAgent additionalContext "appended to the prompt"."""
    def ctx(text: str) -> str:
        return "cat >/dev/null; " + says({"hookSpecificOutput": {
            "hookEventName": "BeforeAgent", "additionalContext": text}})
    gs.gemini_project(settings(BeforeAgent=[group(hook(ctx("from one"), name="one")),
                                            group(hook(ctx("from two"), name="two"))]))
    gs.start()
    answer = gs.ask(payload(gs, "BeforeAgent"))
    assert "from one" in (answer.context or "") and "from two" in (answer.context or ""), \
        answer
