"""The re-prompt the agent gets when a file hook fails: the seed's "LLM Notification
Format", output inline when it is small (≤ 200 lines and ≤ 5 KiB), else the log's path."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from initd.hooks.model import Hook
from initd.hooks.runner import Result

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

    The seed counts ``hookRetryCount++`` then refuses when it exceeds 3: the 3rd
    re-prompt is allowed, the 4th is not (discobot's code refused the 3rd)."""

    def __init__(self, limit: int = 3, count: int = 0,
                 keep: Callable[[int], object] | None = None) -> None:
        """``count``: re-prompts already made since the last user turn (a restarted hook
        service's, as kept); ``keep`` is given each new count before it is acted on, so
        a service killed after saying "attempt 2" starts again at 2, never at 0."""
        self.limit = limit
        self.count = min(max(count, 0), limit)
        self.keep = keep

    def user_turn(self) -> None:
        self._set(0)

    def next_attempt(self) -> int | None:
        """The attempt number of one more re-prompt, or None when the limit is reached."""
        if self.count >= self.limit:
            return None
        self._set(self.count + 1)
        return self.count

    def _set(self, count: int) -> None:
        if count != self.count and self.keep is not None:
            self.keep(count)
        self.count = count
