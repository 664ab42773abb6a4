"""The re-prompt the agent gets when a file hook fails: discobot's hooks spec's "LLM Notification
Format", output inline when it is small (≤ 200 lines and ≤ 5 KiB), else the log's path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from initd.hooks import ledger
from initd.hooks.ledger import Ledger
from initd.hooks.model import Hook
from initd.process.runner import Result
from initd.state.journal import Entry

INLINE_LINES = 200
INLINE_BYTES = 5 * 1024
FILES_SHOWN = 20  # a thousand changed files would drown the message


def failure(hook: Hook, files: Sequence[str], result: Result, attempt: int,
            max_attempts: int) -> str:
    shown = ", ".join(files[:FILES_SHOWN])
    if len(files) > FILES_SHOWN:
        shown += f", and {len(files) - FILES_SHOWN} more"
    code = f"{result.exit_code}" + (f" (timed out after {hook.timeout:g}s)"
                                    if result.timed_out else "")
    lines = [f'[Discobot Hook Failed] "{hook.name}" (pattern: {hook.pattern})', "",
             f"Files: {shown}", f"Exit code: {code}", ""]
    output = result.head.decode(errors="replace")
    last = result.tail or result.head
    count = result.lines + (1 if last and not last.endswith(b"\n") else 0)
    if not result.tail and len(result.head) <= INLINE_BYTES and count <= INLINE_LINES:
        lines += ["Output:", output.rstrip("\n")]
        closing = "Please fix the issues and ensure the hook passes."
    else:
        lines += [f"Output is large ({count} lines). Full output saved to:",
                  f"  {result.output_path}"]
        closing = "Please read the file to see the full output and address the issues."
    lines += ["", f"{closing} (Attempt {attempt}/{max_attempts})"]
    return "\n".join(lines)


class LoopGuard:
    """At most ``limit`` hook-triggered re-prompts per user message; a user turn resets.

    Discobot's hooks spec counts ``hookRetryCount++`` then refuses when it exceeds 3: the 3rd
    re-prompt is allowed, the 4th is not (discobot's code refused the 3rd).

    The count is no file of its own: it is what the turns recorded in ``steps`` (the
    session's ledger, in the journal's directory) since the last user turn, and a turn's
    step and the count it made are one line. So a turn sent again after a kill -9 gets the
    attempt it was given (a re-prompt is never given twice, nor lost), and a user turn
    killed after its reset was recorded has reset (hooks/ledger.py)."""

    def __init__(self, limit: int = 3, steps: Ledger | None = None) -> None:
        self.limit = limit
        self.steps = steps if steps is not None else Ledger(None, "loop-guard")

    @property
    def count(self) -> int:
        """Re-prompts made since the last user turn."""
        return ledger.count(self.steps.before(None, USER_TURN).get("count"), self.limit)

    def user_turn(self, request: Entry | None = None) -> None:
        self.steps.step(request, USER_TURN, lambda counts: (None, {"count": 0}))

    def next_attempt(self, request: Entry | None = None) -> int | None:
        """The attempt number of one more re-prompt, or None when the limit is reached;
        for a ``request`` sent again, what it was given the first time."""
        def decide(counts: dict[str, Any]) -> tuple[int | None, dict[str, Any]]:
            made = ledger.count(counts.get("count"), self.limit)
            if made >= self.limit:
                return None, {"count": made}
            return made + 1, {"count": made + 1}

        attempt = self.steps.step(request, REPROMPT, decide)
        kept = ledger.count(attempt, self.limit)  # (a line sent again is the agent's)
        return kept if kept and kept == attempt else None


USER_TURN = "user turn"
REPROMPT = "re-prompt"
