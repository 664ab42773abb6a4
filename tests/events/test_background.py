"""Running actions again while they fail, and in the background, still owned
(initd/events/background.py): retries as on_failure says (a decision of exit 2 is no
failure where the event can block), at most ``limit`` at once, each reaped, and all
stopped when the service stops."""

from __future__ import annotations

import threading
from pathlib import Path

from initd.config import log
from initd.events.actions import ActionResult, Call, Status
from initd.events.background import Background, attempts
from initd.events.model import Shell
from tests.support.calls import call
from tests.support.harness import wait_for


def counted(tmp_path: Path, exit_code: int, event: str = "post_iteration",
            **hook: object) -> tuple[Call, Path]:
    count = tmp_path / "count"
    made = call(Shell(f"echo x >> {count}; exit {exit_code}"), event=event,
                hook_fields={"on_failure": "retry", "retries": 2, "retry_delay": 0.0, **hook},
                workspace=str(tmp_path))
    return made, count


def test_retried_while_it_fails(tmp_path: Path) -> None:
    made, count = counted(tmp_path, 1)
    assert attempts(made).exit_code == 1 and count.read_text() == "x\n" * 3
    (tmp_path / "ok").mkdir()
    made, count = counted(tmp_path / "ok", 0)
    assert attempts(made).status == Status.OK and count.read_text() == "x\n"


def test_exit_2_is_a_decision_where_the_event_can_block(tmp_path: Path) -> None:
    made, count = counted(tmp_path, 2, event="pre_tool")
    assert attempts(made).exit_code == 2 and count.read_text() == "x\n"  # not retried
    (tmp_path / "iteration").mkdir()
    made, count = counted(tmp_path / "iteration", 2, event="post_iteration")
    attempts(made)
    assert count.read_text() == "x\n" * 3  # a failure like any other there


def test_no_retry_unless_on_failure_says_so_and_none_around_a_webhooks_own(
        tmp_path: Path) -> None:
    made, count = counted(tmp_path, 1, on_failure="continue")
    attempts(made)
    assert count.read_text() == "x\n"


def test_a_cancel_ends_the_retries(tmp_path: Path) -> None:
    """Cancelled while it waits to try again (the first attempt's line is written), it
    ends with the first attempt's result, not an hour later."""
    cancel = threading.Event()
    made, count = counted(tmp_path, 1, retry_delay=3600.0)
    setter = threading.Thread(target=lambda: (wait_for(count.exists, what="a try"),
                                              cancel.set()))
    setter.start()
    assert attempts(made._replace(cancel=cancel)).exit_code == 1
    setter.join()
    assert count.read_text() == "x\n"


def test_at_most_limit_at_once_each_reaped_and_stopped(tmp_path: Path) -> None:
    done: list[ActionResult] = []
    background = Background(2, log.get())
    slow = call(Shell("sleep 3600"), hook_fields={"timeout": 3600.0},
                workspace=str(tmp_path), grace=0.1)
    assert background.start(slow, lambda c, r: done.append(r))
    assert background.start(slow, lambda c, r: done.append(r))
    assert not background.start(slow, lambda c, r: done.append(r))  # the limit
    background.stop()
    assert len(done) == 2 and all(r.status != Status.OK for r in done)  # stopped
    assert not background.start(slow, lambda c, r: done.append(r))  # stopping: no more


def test_a_failure_to_run_never_takes_the_service_down(tmp_path: Path) -> None:
    background = Background(1, log.get())
    broken = call(Shell("true"))._replace(limits=None)  # (a Call no action can run)
    assert background.start(broken, lambda c, r: None)
    wait_for(lambda: background.start(call(Shell("true")), lambda c, r: None),
             what="the slot given back")
    background.stop()
