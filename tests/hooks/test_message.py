"""The re-prompt after a failed file hook (initd.hooks.message) and its loop guard."""

from __future__ import annotations

import pytest

from initd.hooks import message
from initd.hooks.model import Hook
from initd.process.runner import Result
from tests.hooks import support

LOG = "/root/.discobot/abc123/hooks/output/go-format-check.log"
GOFMT = (b"internal/server/handler.go: formatting differs from gofmt\n"
         b"internal/server/service.go: formatting differs from gofmt\n")
FILES = ["internal/server/handler.go", "internal/server/service.go"]
HEADER = '[Discobot Hook Failed] "Go format check" (pattern: *.go)'
FIX = "Please fix the issues and ensure the hook passes."
READ = "Please read the file to see the full output and address the issues."


def hook(name: str = "Go format check", pattern: str = "*.go", timeout: float = 900.0) -> Hook:
    return Hook(id="go-format-check", name=name, type="file", path="/h/10-gofmt.sh",
                directory="/h", pattern=pattern, timeout=timeout)


def result(output: bytes, code: int = 1, *, tail: bytes = b"", timed_out: bool = False,
           lines: int | None = None) -> Result:
    """A Result as the runner makes it: head holds the output, lines counts newlines."""
    counted = output.count(b"\n") + tail.count(b"\n")
    return support.result(code, LOG)._replace(
        head=output, tail=tail, timed_out=timed_out,
        lines=counted if lines is None else lines)


def content(text: str) -> list[str]:
    """The message's non-blank lines: the structure, whatever blank-line spacing it uses."""
    return [line for line in text.split("\n") if line]


def is_inline(text: str) -> bool:
    return "Output:" in text.split("\n") and "Output is large" not in text


# Small output: inline


def test_small_output_inline() -> None:
    """Guards against a change to the inline form the agent (and UI) are given."""
    text = message.failure(hook(), FILES, result(GOFMT), 1, 3)
    assert content(text) == [
        HEADER,
        "Files: internal/server/handler.go, internal/server/service.go",
        "Exit code: 1",
        "Output:",
        "internal/server/handler.go: formatting differs from gofmt",
        "internal/server/service.go: formatting differs from gofmt",
        f"{FIX} (Attempt 1/3)",
    ]
    assert text.startswith(HEADER)
    assert text.endswith(f"{FIX} (Attempt 1/3)")


def test_small_output_is_the_specs_text_exactly() -> None:
    """Guards against drifting from the 'Small output' example of discobot's hooks spec, byte
    for byte."""
    text = message.failure(hook(), FILES, result(GOFMT), 1, 3)
    assert text == (
        '[Discobot Hook Failed] "Go format check" (pattern: *.go)\n'
        "\n"
        "Files: internal/server/handler.go, internal/server/service.go\n"
        "Exit code: 1\n"
        "\n"
        "Output:\n"
        "internal/server/handler.go: formatting differs from gofmt\n"
        "internal/server/service.go: formatting differs from gofmt\n"
        "\n"
        "Please fix the issues and ensure the hook passes. (Attempt 1/3)")


def test_large_output_is_the_specs_text_exactly() -> None:
    """Guards against drifting from the 'Large output' example of discobot's hooks spec, byte
    for byte."""
    text = message.failure(hook(), FILES, result(b"x\n" * 847), 1, 3)
    assert text == (
        '[Discobot Hook Failed] "Go format check" (pattern: *.go)\n'
        "\n"
        "Files: internal/server/handler.go, internal/server/service.go\n"
        "Exit code: 1\n"
        "\n"
        "Output is large (847 lines). Full output saved to:\n"
        f"  {LOG}\n"
        "\n"
        "Please read the file to see the full output and address the issues. (Attempt 1/3)")


def test_output_without_a_final_newline_and_with_inner_blank_lines() -> None:
    """Guards against trimming or reflowing the hook's own output beyond its final newlines."""
    text = message.failure(hook(), ["a.go"], result(b"  indented\n\nafter blank\n\n\n"), 1, 3)
    lines = text.split("\n")
    start = lines.index("Output:") + 1
    assert lines[start:start + 3] == ["  indented", "", "after blank"]
    assert "after blank\n\n\n" not in text
    text = message.failure(hook(), ["a.go"], result(b"no newline"), 1, 3)
    assert "Output:\nno newline\n" in text


def test_undecodable_output_is_replaced_not_raised() -> None:
    """Guards against a hook printing invalid UTF-8 crashing the message."""
    text = message.failure(hook(), ["a.go"], result(b"bad \xff\xfe byte\n"), 1, 3)
    assert "bad \ufffd\ufffd byte" in text


def test_name_pattern_and_attempt_are_shown_as_given() -> None:
    """Guards against a hard-coded name, pattern or attempt count."""
    text = message.failure(hook(name="ESLint", pattern="src/**/*.{ts,tsx}"), ["src/a.ts"],
                           result(b"err\n", code=2), 2, 3)
    assert content(text)[0] == '[Discobot Hook Failed] "ESLint" (pattern: src/**/*.{ts,tsx})'
    assert "Exit code: 2" in content(text)
    assert content(text)[-1] == f"{FIX} (Attempt 2/3)"


# Inline or large: the boundaries


@pytest.mark.parametrize(("output", "inline"), [
    pytest.param(b"x\n" * 199, True, id="199-lines"),
    pytest.param(b"x\n" * 200, True, id="200-lines"),
    pytest.param(b"x\n" * 201, False, id="201-lines"),
    pytest.param(b"y" * 5119 + b"\n", True, id="5120-bytes"),
    pytest.param(b"y" * 5120, True, id="5120-bytes-no-newline"),
    pytest.param(b"y" * 5120 + b"\n", False, id="5121-bytes"),
    pytest.param(b"y" * 5121, False, id="5121-bytes-no-newline"),
    pytest.param("é".encode() * 2561, False, id="5122-bytes-2561-chars"),
    pytest.param("é".encode() * 2560, True, id="5120-bytes-2560-chars"),
])
def test_inline_boundaries(output: bytes, inline: bool) -> None:
    """Guards against an off-by-one at 200 lines / 5 KiB, or counting characters for bytes."""
    text = message.failure(hook(), ["a.go"], result(output), 1, 3)
    assert is_inline(text) is inline
    if inline:
        assert content(text)[-1] == f"{FIX} (Attempt 1/3)"
    else:
        assert content(text)[-1] == f"{READ} (Attempt 1/3)"


def test_exactly_200_lines_and_5120_bytes_together_are_inline() -> None:
    """Guards against the two limits being combined into a stricter one."""
    output = (b"q" * 24 + b"\n") * 199 + b"q" * 144 + b"\n"
    assert len(output) == 5120 and output.count(b"\n") == 200
    assert is_inline(message.failure(hook(), ["a.go"], result(output), 1, 3))


def test_large_form_by_lines() -> None:
    """Guards against the large form's wording, path indent or line count changing."""
    text = message.failure(hook(), FILES, result(b"x\n" * 201), 2, 3)
    assert content(text) == [
        HEADER,
        "Files: internal/server/handler.go, internal/server/service.go",
        "Exit code: 1",
        "Output is large (201 lines). Full output saved to:",
        f"  {LOG}",
        f"{READ} (Attempt 2/3)",
    ]
    assert "Output:" not in text.split("\n")
    assert "x" not in content(text)


def test_large_form_by_bytes_does_not_inline_the_output() -> None:
    """Guards against a 5 KiB+ output being pasted into the prompt anyway."""
    text = message.failure(hook(), ["a.go"], result(b"y" * 5120 + b"\n"), 2, 3)
    assert "Output is large (1 lines). Full output saved to:" in content(text)
    assert f"  {LOG}" in text.split("\n")
    assert "yyyy" not in text
    assert content(text)[-1] == f"{READ} (Attempt 2/3)"


def test_a_result_with_a_tail_is_large() -> None:
    """Guards against inlining only the head of an output too long to keep in memory."""
    res = result(b"head\n", tail=b"tail\n")
    assert res.lines == 2
    text = message.failure(hook(), ["a.go"], res, 1, 3)
    assert not is_inline(text)
    assert "Output is large (2 lines). Full output saved to:" in content(text)
    assert "head" not in text and "tail" not in text


def test_201_lines_without_a_final_newline_are_large() -> None:
    """Guards against undercounting by one when the output does not end in a newline."""
    output = b"x\n" * 200 + b"x"
    assert len(output.decode().splitlines()) == 201
    text = message.failure(hook(), ["a.go"], result(output), 1, 3)
    assert not is_inline(text)


# Exit code and files


@pytest.mark.parametrize(("timeout", "shown"), [(5.0, "5s"), (2.5, "2.5s"), (900.0, "900s")])
def test_timed_out(timeout: float, shown: str) -> None:
    """Guards against a timeout reading like an ordinary exit 124."""
    res = result(b"slow\n", code=124, timed_out=True)
    text = message.failure(hook(timeout=timeout), ["a.go"], res, 1, 3)
    assert f"Exit code: 124 (timed out after {shown})" in content(text)


def test_plain_exit_124_is_not_called_a_timeout() -> None:
    """Guards against reporting a timeout for a hook that merely exited 124 itself."""
    text = message.failure(hook(timeout=5.0), ["a.go"], result(b"", code=124), 1, 3)
    assert "Exit code: 124" in content(text)
    assert "timed out" not in text


@pytest.mark.parametrize(("count", "line"), [
    (1, "Files: f00.go"),
    (20, "Files: " + ", ".join(f"f{i:02}.go" for i in range(20))),
    (21, "Files: " + ", ".join(f"f{i:02}.go" for i in range(20)) + ", and 1 more"),
    (1000, "Files: " + ", ".join(f"f{i:02}.go" for i in range(20)) + ", and 980 more"),
])
def test_files_line(count: int, line: str) -> None:
    """Guards against a thousand changed files drowning the message (first 20, then a count)."""
    files = [f"f{i:02}.go" for i in range(count)]
    text = message.failure(hook(), files, result(b"err\n"), 1, 3)
    assert content(text)[1] == line


def test_files_are_shown_in_the_given_order() -> None:
    """Guards against the message reordering the files the hook ran on."""
    text = message.failure(hook(), ("z.go", "a.go", "m/b.go"), result(b"err\n"), 1, 3)
    assert content(text)[1] == "Files: z.go, a.go, m/b.go"


# LoopGuard


def test_loop_guard_allows_three_then_refuses() -> None:
    """Guards against discobot's off-by-one (>=) that allowed only two re-prompts."""
    guard = message.LoopGuard(3)
    assert [guard.next_attempt() for _ in range(4)] == [1, 2, 3, None]
    assert guard.next_attempt() is None  # stays refused until the user speaks


def test_loop_guard_default_limit_is_three() -> None:
    """Guards against the default drifting from discobot's hooks spec's 3 consecutive re-prompts."""
    guard = message.LoopGuard()
    assert [guard.next_attempt() for _ in range(4)] == [1, 2, 3, None]


def test_user_turn_resets_the_guard() -> None:
    """Guards against a user's new message not restoring the re-prompt budget."""
    guard = message.LoopGuard(3)
    assert [guard.next_attempt() for _ in range(4)] == [1, 2, 3, None]
    guard.user_turn()
    assert guard.next_attempt() == 1
    assert guard.next_attempt() == 2
    guard.user_turn()  # mid-way too
    assert [guard.next_attempt() for _ in range(4)] == [1, 2, 3, None]


def test_loop_guard_limit_zero_refuses_at_once() -> None:
    """Guards against a limit of 0 still allowing one automatic re-prompt."""
    guard = message.LoopGuard(0)
    assert guard.next_attempt() is None
    guard.user_turn()
    assert guard.next_attempt() is None


def test_loop_guard_limit_one() -> None:
    """Guards against an off-by-one at the smallest useful limit."""
    guard = message.LoopGuard(1)
    assert [guard.next_attempt() for _ in range(3)] == [1, None, None]
