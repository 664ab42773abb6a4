"""What the control API does, without HTTP: turns, cancel, rerun, status, output.

One evaluation at a time: a turn that arrives while one runs is refused (the API's
409), never queued behind it. The loop guard counts hook-triggered re-prompts per user
message (the seed's MAX_HOOK_RETRIES = 3).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from initd.hooks import changes, discovery, filehooks, message, patterns
from initd.hooks.discovery import Found
from initd.hooks.filehooks import Ran
from initd.hooks.session import HookContext, run_one
from initd.hooks.status import Status


class Busy(Exception):
    """An evaluation is already running."""


class HookService:
    def __init__(self, ctx: HookContext, image_dir: str, max_attempts: int = 3) -> None:
        self.ctx = ctx
        self.image_dir = image_dir
        self.guard = message.LoopGuard(max_attempts)
        self._lock = threading.Lock()
        self._cancel: threading.Event | None = None

    def discover(self) -> Found:
        """Re-read on every call: hooks added or edited since are picked up at once."""
        return discovery.for_workspace(self.ctx.workspace, self.image_dir)

    def status(self) -> Status:
        return self.ctx.store.read()

    def output(self, hook_id: str) -> str | None:
        try:
            with open(self.ctx.store.output_path(hook_id), "rb") as f:
                return f.read().decode(errors="replace")
        except FileNotFoundError:
            return None

    def turn(self, trigger: str) -> dict[str, Any]:
        """Evaluate the file hooks after a completed turn; raises Busy if one runs."""
        if not self._lock.acquire(blocking=False):
            raise Busy
        try:
            if trigger == "user":
                self.guard.user_turn()
            self._cancel = threading.Event()
            found = self.discover()
            evaluation = filehooks.evaluate(found.hooks, self.ctx, cancel=self._cancel)
            return self._answer(evaluation)
        finally:
            self._cancel = None
            self._lock.release()

    def cancel(self) -> bool:
        """Stop the running evaluation (its hook's whole group); pending stays pending."""
        cancel = self._cancel
        if cancel is None:
            return False
        cancel.set()
        return True

    def rerun(self, hook_id: str) -> dict[str, Any] | None:
        """Run one hook now (a file hook against the dirty files its pattern matches)."""
        hook = next((h for h in self.discover().hooks if h.id == hook_id), None)
        if hook is None:
            return None
        if hook.type == "file":  # the same inputs as in an evaluation
            dirty = changes.dirty_files(self.ctx.workspace)
            result = filehooks.run_file_hook(hook, patterns.matching(hook.pattern or "", dirty),
                                             self.ctx)
        else:
            result = run_one(hook, self.ctx)
        return {"hookId": hook.id, "success": result.ok, "exitCode": result.exit_code,
                "timedOut": result.timed_out, "outputPath": result.output_path}

    def _answer(self, evaluation: filehooks.Evaluation) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "action": "none", "message": None, "attempt": None,
            "maxAttempts": self.guard.limit, "evaluation": evaluation.action,
            "results": [_result(ran) for ran in evaluation.ran],
            "pending": list(evaluation.pending)}
        failed = evaluation.failed
        if evaluation.action == filehooks.REPROMPT and failed is not None:
            attempt = self.guard.next_attempt()
            if attempt is None:
                answer["evaluation"] = "loop-guard"  # pending stays for the next user turn
            else:
                answer.update(action="reprompt", attempt=attempt, message=message.failure(
                    failed.hook, failed.files, failed.result, attempt, self.guard.limit))
        return answer


def _result(ran: Ran) -> dict[str, Any]:
    r = ran.result
    return {"hookId": ran.hook.id, "name": ran.hook.name, "success": r.ok,
            "exitCode": r.exit_code, "timedOut": r.timed_out, "cancelled": r.cancelled,
            "files": list(ran.files), "outputPath": r.output_path,
            "durationMs": round(r.duration * 1000, 1)}


def hook_view(found: Found) -> dict[str, Any]:
    return {"hooks": [{**hook._asdict(), "warnings": list(hook.warnings)}
                      for hook in found.hooks],
            "skipped": [problem._asdict() for problem in found.problems]}


def health() -> dict[str, Any]:
    return {"status": "ok", "pid": os.getpid()}
