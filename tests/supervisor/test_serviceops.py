"""supervisor/serviceops.py: what the hook service (the agent's) may have root do over
their channel, each bounded: a rewrite of the pre-commit chain (none, refused, busy, too
many, or run as the repository's owner with its error's last line) and a trust question
(a refusal whatever went wrong, the reason in root's log only). Real processes."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from initd.config import log
from initd.process import spawn
from initd.supervisor import serviceops
from initd.supervisor.serviceops import PRECOMMIT_BURST, Ops


def ops(precommit: spawn.Spec | str | None, settings: dict[str, str] | None = None) -> Ops:
    return Ops(precommit, settings or {}, grace=2.0, log=log.get(logger="test"))


def spec(code: str, cwd: Path) -> spawn.Spec:
    return spawn.Spec(argv=(sys.executable, "-c", code), env={"PATH": "/usr/bin:/bin"},
                      cwd=str(cwd))


def test_no_chain_and_a_refused_one_answer_at_once() -> None:
    assert ops(None).precommit_refusal() == {
        "result": "no managed pre-commit chain in this workspace"}
    why = "not rewritten: the repository /w is root's"
    assert ops(why).precommit_refusal() == {"refused": why}


def test_a_rewrite_runs_once_at_a_time_and_at_most_its_burst(tmp_path: Path) -> None:
    made = ops(spec("print('installed')", tmp_path))
    assert made.precommit_refusal() is None  # (it may run: the one in flight)
    busy = made.precommit_refusal()
    assert busy is not None and busy["error"].startswith("busy:")
    assert made.rewrite(threading.Event()) == {"result": "installed"}
    for _ in range(PRECOMMIT_BURST - 1):
        assert made.precommit_refusal() is None
        made.rewrite(threading.Event())
    too_many = made.precommit_refusal()
    assert too_many is not None and too_many["error"].startswith("too many:")


def test_a_failed_rewrite_says_its_last_line_never_more(tmp_path: Path) -> None:
    code = ("import sys; sys.stderr.write('noise\\n' * 1000 + 'initd: ' + 'x' * 5000 + "
            "'\\n'); sys.exit(125)")
    made = ops(spec(code, tmp_path))
    assert made.precommit_refusal() is None
    answer = made.rewrite(threading.Event())
    assert answer == {"error": "x" * 2000}


def test_a_rewrite_that_cannot_start_is_an_error_and_frees_the_next(tmp_path: Path) -> None:
    made = ops(spawn.Spec(argv=(str(tmp_path / "missing"),), env={}, cwd=str(tmp_path)))
    assert made.precommit_refusal() is None
    assert "error" in made.rewrite(threading.Event())
    assert made.precommit_refusal() is None  # (the lock was given back)


def test_a_trust_question_is_refused_whatever_the_store_holds(tmp_path: Path) -> None:
    """A store that does not exist, or is garbage: the answer is the same refusal, in the
    same words, with nothing of root's reason in it."""
    answers = []
    for content in (None, "not json", '{"version": 1, "entries": []}'):
        store = tmp_path / "trust.json"
        if content is not None:
            store.write_text(content)
        made = ops(None, {"INITD_TRUST_FILE": str(store)})
        answers.append(made.trust(key="w/.discobot/hooks/a.sh", digest="0" * 64))
    assert all(answer == answers[0] and answer["trusted"] is False for answer in answers)
    assert str(tmp_path) not in str(answers)


def test_the_channel_is_read_at_a_bounded_pace() -> None:
    made = ops(None)
    taken = sum(made.channel.take() for _ in range(serviceops.BURST * 4))
    assert serviceops.BURST <= taken < serviceops.BURST * 2  # (its burst, not what came)
