"""What the control API does, without HTTP (initd/service/core.py): a turn re-prompts
while a file hook fails, at most max_attempts per user message (the loop guard); a turn
or an event sent again with its key runs no hook twice; one evaluation at a time; health
and readiness without a supervisor; a trust question answered in the one refusal's words.
Over a real socket and a kill -9: tests/service/test_api.py, test_exactly_once*.py."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.hooks.trust import UNAPPROVED
from initd.service.core import Busy, HookService
from tests.hooks.support import (
    add_hook,
    checker,
    forget_session,
    git_ok,
    git_repo,
    hook_context,
    settle,
)
from tests.support.harness import wait_for


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    made = git_repo(tmp_path / "ws")
    checker(made, "10-check.sh", "*.txt", "BAD")
    (made / "a.txt").write_text("ok\n")
    git_ok(made, "add", "a.txt")
    git_ok(made, "commit", "-q", "-m", "first")
    return made


@pytest.fixture
def service(repo: Path) -> Iterator[HookService]:
    sid = f"core-{uuid.uuid4().hex[:8]}"
    made = HookService(hook_context(repo, sid), str(repo / "no-image"), max_attempts=2)
    yield made
    made.close()
    forget_session(sid)


def test_a_failing_file_hook_re_prompts_at_most_max_attempts(service: HookService,
                                                             repo: Path) -> None:
    settle()
    (repo / "a.txt").write_text("BAD\n")
    first = service.turn("user")
    assert (first["action"], first["attempt"], first["maxAttempts"]) == ("reprompt", 1, 2)
    assert "BAD" in first["message"]
    assert service.turn("hook")["attempt"] == 2
    guarded = service.turn("hook")
    assert (guarded["action"], guarded["evaluation"]) == ("none", "loop-guard")
    assert service.turn("user")["attempt"] == 1  # a person's message starts again


def test_a_turn_sent_again_with_its_key_runs_nothing_again(service: HookService,
                                                           repo: Path) -> None:
    settle()
    (repo / "a.txt").write_text("BAD\n")
    first = service.turn("user", key="turn-1")
    again = service.turn("user", key="turn-1")
    assert again["replayed"] and again["attempt"] == first["attempt"] == 1
    assert service.status()["hooks"]["10-check"]["runCount"] == 1


def test_an_event_sent_again_with_its_key_runs_its_hooks_once(service: HookService,
                                                              repo: Path) -> None:
    log = repo / "fired"
    add_hook(repo / ".discobot" / "hooks", "20-ev.sh", f"echo x >> {log}", type="stop")
    service = HookService(service.ctx, service.image_dir)  # the hooks as they are now
    try:
        first = service.fire("stop", {}, key="k")
        again = service.fire("stop", {}, key="k")
    finally:
        service.close()
    assert not first["replayed"] and again["replayed"] and log.read_text() == "x\n"


def test_one_evaluation_at_a_time(service: HookService, repo: Path) -> None:
    gate = repo / "gate"
    checker(repo, "05-slow.sh", "*.txt", "never", timeout=60)
    hook = repo / ".discobot" / "hooks" / "05-slow.sh"
    hook.write_text(hook.read_text().replace("for f in", f"while [ ! -e {gate} ]; do "
                                             "sleep 0.01; done; for f in"))
    settle()
    (repo / "a.txt").write_text("changed\n")
    done: list[dict[str, object]] = []
    runner = threading.Thread(target=lambda: done.append(service.turn("user")))
    runner.start()
    try:
        wait_for(lambda: service._cancel is not None, what="the evaluation running")
        with pytest.raises(Busy):
            service.turn("user")
        with pytest.raises(Busy):
            service.rerun("10-check")
    finally:
        gate.write_text("")
        runner.join(60)
    assert done and not service.cancel()  # nothing runs now: nothing to cancel


def test_health_readiness_and_trust_without_a_supervisor(service: HookService) -> None:
    health = service.health()
    assert health["status"] == "ok" and health["agent"] is None and health["problems"] == []
    assert service.readiness() == (True, "no agent is supervised by this service", None)
    assert service.trust_verdict("/ws/a.sh", "a" * 64) == UNAPPROVED


def test_output_and_rerun(service: HookService, repo: Path) -> None:
    assert service.output("10-check") is None and service.rerun("nope") is None
    rerun = service.rerun("10-check")
    assert rerun is not None and rerun["hookId"] == "10-check"
    assert service.output("10-check") is not None
