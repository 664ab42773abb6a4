"""Claude Code's matching hooks of one event, run together: "All matching hooks run in
parallel" (https://code.claude.com/docs/en/hooks, "Hook handler fields"); two ``sleep 3``
guards take 3 s, not 6. Their answers are then merged in the order the hooks load, never
in the order they finish, so the outcome is the same on every run (verdict.Tally: deny >
ask > allow, the blocks' reasons in load order, the first one first).

Each action still runs at most once per request (journal.once's rule): its "fired" line is
written, from the caller's thread, before any of them starts, and each outcome is recorded
in order once all are done. A step an earlier delivery fired is not run again.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from initd.events.actions import ActionResult, Call, Status, replayed
from initd.events.background import attempts
from initd.state import jsonview
from initd.state.journal import FULL, Entry


def run(items: Sequence[tuple[str, Call]], journal: Entry | None) -> list[ActionResult]:
    """``attempts(call)`` for each (step, call), at once; the results in the same order."""
    results: list[ActionResult | None] = [None] * len(items)
    todo: list[int] = []
    for at, (step, _) in enumerate(items):
        if journal is not None:
            fired, _ = journal.seen(step)
            if fired:
                results[at] = replayed(journal.kept(step))
                continue
            if not journal.fire(step):
                results[at] = replayed(FULL)
                continue
        todo.append(at)

    def one(at: int) -> None:
        try:
            results[at] = attempts(items[at][1])
        except Exception as err:  # (a bug of initd's: the guard's error, never a pass)
            results[at] = ActionResult(Status.ERROR, error=f"initd could not run it: {err}",
                                       fails_closed=True)

    threads = []
    for at in todo[1:]:
        thread = threading.Thread(target=one, args=(at,), daemon=True,
                                  name=f"hook-{items[at][1].hook.key}")
        try:
            thread.start()
        except RuntimeError:  # no thread (a pids limit): this one runs here, after
            one(at)
            continue
        threads.append(thread)
    if todo:
        one(todo[0])  # the first in this thread: one hook costs no thread
    for thread in threads:
        thread.join()
    done = [result if result is not None else ActionResult(Status.ERROR, error="not run",
                                                           fails_closed=True)
            for result in results]
    if journal is not None:
        for at in todo:
            journal.record(items[at][0], jsonview.view(done[at]))
    return done
