"""Exactly once across a restart (initd/state/journal/), under initd as PID 1: the hook
service is killed with -9 while a hook runs (between "fired" and "recorded"); the client
(`initd emit`, `initd turn`) sends the request again with its key, to the service initd
restarted on the same socket, and the hook never runs a second time for it. What ran
and was recorded is reported again, not run again; a request sent again after its
answer gets that answer (``replayed``), and runs nothing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.hooks.support import add_hook, forget_session, git_ok, settle
from tests.service.support import INITD, call, service_process
from tests.support.harness import Initd, wait_for


class Box:
    """A workspace whose hooks note each run in ``runs/<name>`` (one line a run); a hook
    marked slow waits for ``release`` after noting its run (the moment of the kill)."""

    def __init__(self, root: Path) -> None:
        self.repo = root / "ws"
        self.repo.mkdir()
        git_ok(self.repo, "init", "-q")
        git_ok(self.repo, "config", "user.email", "agent@example.com")
        git_ok(self.repo, "config", "user.name", "Agent")
        self.runs = root / "runs"
        self.runs.mkdir()
        self.hooks = self.repo / ".discobot" / "hooks"
        self.sid = f"once-{uuid.uuid4().hex[:8]}"

    def hook(self, filename: str, kind: str, name: str, slow: bool = False,
             fail: bool = False, **fields: object) -> None:
        wait = f"while [ ! -e {self.runs}/release ]; do sleep 0.05; done" if slow else ":"
        add_hook(self.hooks, filename, f"echo run >> {self.runs}/{name}\n{wait}\n"
                 f"echo {name} done\nexit {1 if fail else 0}", type=kind, **fields)

    def count(self, name: str) -> int:
        path = self.runs / name
        return len(path.read_text().splitlines()) if path.exists() else 0

    def wait_running(self, name: str, times: int = 1) -> None:
        wait_for(lambda: self.count(name) >= times, what=f"hook {name} running")


@pytest.fixture
def box() -> Iterator[Box]:
    root = Path(tempfile.mkdtemp(prefix="initd-once-"))
    made = Box(root)
    yield made
    forget_session(made.sid)
    shutil.rmtree(root, ignore_errors=True)


def boot(initd, box: Box) -> Initd:  # type: ignore[no-untyped-def]
    init: Initd = initd(["--workspace", str(box.repo), "--session-id", box.sid,
                         "--hooks-dir", str(box.repo / "no-image"), "--", "sleep", "1000"])
    service_process(init)
    return init


def cli(init: Initd, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*INITD, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "INITD_SOCKET": init.socket})


def finish(verb: subprocess.Popen[str]) -> tuple[int, dict[str, object], str]:
    out, err = verb.communicate(timeout=60)
    return verb.returncode, json.loads(out) if out.strip() else {}, err


def kill_service(init: Initd) -> None:
    """kill -9 of the service while its hook runs; initd starts another."""
    old = service_process(init)
    old.send_signal(signal.SIGKILL)
    wait_for(lambda: (lambda now: now if now.pid != old.pid else None)(service_process(init)),
             what="a new hook service")


@pytest.mark.slow
def test_an_event_hook_killed_mid_run_is_not_run_again_when_the_event_comes_again(
        initd, box: Box) -> None:
    box.hook("10-first.sh", "post_tool", "first")  # quick: recorded before the kill
    box.hook("20-slow.sh", "post_tool", "slow", slow=True)
    box.hook("30-last.sh", "post_tool", "last")  # never fired before the kill
    init = boot(initd, box)
    emit = cli(init, "emit", "post_tool", "--id", "tool-use-1", "--data", '{"tool": "Bash"}')
    box.wait_running("slow")
    kill_service(init)  # between "fired" and "recorded" of 20-slow
    (box.runs / "release").touch()  # (had it been killed or not, it would end now)
    code, outcome, err = finish(emit)  # emit sent it again itself, with its key
    assert code == 0, err
    assert [box.count(n) for n in ("first", "slow", "last")] == [1, 1, 1]
    first, slow, last = outcome["results"]  # type: ignore[misc]
    assert (first["status"], first["stdout"]) == ("ok", "first done\n")  # as recorded
    assert slow["status"] == "error" and "interrupted" in slow["error"]
    assert "not run again" in slow["error"]
    assert (last["status"], last["stdout"]) == ("ok", "last done\n")
    assert outcome["replayed"] is False

    again = cli(init, "emit", "post_tool", "--id", "tool-use-1", "--data", '{"tool": "Bash"}')
    code, replay, err = finish(again)  # the answer, again: nothing runs
    assert code == 0 and replay["replayed"] is True, err
    assert replay["results"] == outcome["results"]
    assert [box.count(n) for n in ("first", "slow", "last")] == [1, 1, 1]

    other = cli(init, "emit", "post_tool", "--data", '{"tool": "Bash"}')  # a new event
    code, fresh, err = finish(other)
    assert code == 0 and fresh["replayed"] is False, err
    assert [box.count(n) for n in ("first", "slow", "last")] == [2, 2, 2]
    init.signal(signal.SIGTERM)
    init.wait()


def test_a_blocking_answer_is_the_same_when_the_event_comes_again(initd, box: Box) -> None:
    add_hook(box.hooks, "10-guard.sh", f'echo run >> {box.runs}/guard\n'
             'echo "no force-push" >&2\nexit 2', type="pre_tool")
    init = boot(initd, box)
    # one after the other: sent while the first runs, the second would get a 409
    # (test_idempotency_key.py), and emit would say blocked without a reason of the hook's
    answers = [finish(cli(init, "emit", "pre_tool", "--id", "k-1")) for _ in range(2)]
    assert [code for code, _, _ in answers] == [2, 2]
    assert {answer["reason"] for _, answer, _ in answers} == {"no force-push"}  # type: ignore[misc]
    assert sorted(answer["replayed"] for _, answer, _ in answers) == [False, True]
    assert box.count("guard") == 1
    init.signal(signal.SIGTERM)
    init.wait()


@pytest.mark.slow
def test_a_turn_killed_mid_hook_does_not_run_it_twice_and_it_stays_pending(
        initd, box: Box) -> None:
    box.hook("10-slow.sh", "file", "slow", slow=True, pattern="*.py")
    (box.repo / "a.py").write_text("x = 1\n")
    settle()
    init = boot(initd, box)
    turn = cli(init, "turn", "--id", "turn-1")
    box.wait_running("slow")
    kill_service(init)
    (box.runs / "release").touch()
    code, answer, err = finish(turn)
    assert code == 0, err
    assert box.count("slow") == 1  # not again in the same turn
    assert answer["pending"] == ["10-slow"] and answer["replayed"] is False
    [result] = answer["results"]  # type: ignore[misc]
    assert "interrupted" in json.dumps(result)

    code, next_turn, err = finish(cli(init, "turn"))  # the next turn runs it: once more
    assert code == 0 and next_turn["pending"] == [], (err, next_turn)
    assert box.count("slow") == 2
    init.signal(signal.SIGTERM)
    init.wait()


@pytest.mark.slow
def test_a_turn_sent_again_is_not_a_second_reprompt(initd, box: Box) -> None:
    box.hook("10-bad.sh", "file", "bad", fail=True, pattern="*.py")
    (box.repo / "a.py").write_text("x = 1\n")
    settle()
    init = boot(initd, box)
    first = call(init.socket, "POST", "/v1/turn", {"trigger": "user"})[1]
    status, again = _with_key(init, "/v1/turn", {"trigger": "hook"}, "t-2")
    status2, repeat = _with_key(init, "/v1/turn", {"trigger": "hook"}, "t-2")
    assert (first["action"], first["attempt"]) == ("reprompt", 1)
    assert (status, again["attempt"], again["replayed"]) == (200, 2, False)
    assert (status2, repeat["attempt"], repeat["replayed"]) == (200, 2, True)
    assert box.count("bad") == 2  # the user turn's, and t-2's: once
    third = call(init.socket, "POST", "/v1/turn", {"trigger": "hook"})[1]
    assert third["attempt"] == 3  # not 4: the repeat counted no re-prompt
    init.signal(signal.SIGTERM)
    init.wait()


def _with_key(init: Initd, path: str, body: object, key: str) -> tuple[int, dict[str, object]]:
    from initd.commands import client

    return client.call("POST", path, body, sock=init.socket, timeout=60, key=key)


@pytest.mark.parametrize("key", ["", "a b", "x" * 201, "é", "line\nbreak"])
def test_a_bad_key_is_refused_and_runs_nothing(initd, box: Box, key: str) -> None:
    box.hook("10-count.sh", "post_tool", "count")
    init = boot(initd, box)
    import socket

    request = (f"POST /v1/events/post_tool HTTP/1.0\r\nIdempotency-Key: {key}\r\n"
               "Content-Length: 2\r\n\r\n{}").encode()
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(30)
        sock.connect(init.socket)
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.split(b" ")[1] in (b"400",), answer[:300]
    assert box.count("count") == 0
    assert psutil.pid_exists(init.init_pid)
    init.signal(signal.SIGTERM)
    init.wait()
