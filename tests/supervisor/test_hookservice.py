"""supervisor/hookservice.py: the hook service as root's supervised child, driven as the
supervisor's loop drives it (poll its waitables, tick). The service here is a relay: a
real process started as ServiceChild starts the service (its inherited socket, its
channel, the guard snapshot, a session of its own) that passes what the test sends onto
the channel and what root answers back to the test, so the test speaks for the agent's
end of the channel (invariant 8): ready, trust, precommit, cancel, and what is not ours."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from initd.config import log
from initd.hooks.trust import UNAPPROVED, Trust, for_script
from initd.process import procfs, spawn, users
from initd.state import snapshot
from initd.supervisor.hookservice import ServiceChild
from initd.supervisor.pace import Bucket
from initd.supervisor.serviceops import BATCH, BURST, PRECOMMIT_BURST, RATE
from initd.supervisor.states import State

# The service: connects to the test's control socket, says what it was given, then
# relays lines both ways between it and the channel. With "leave", it first leaves a
# process that ignores TERM in its session, in a group of its own (a hook of its).
RELAY = """
import json, os, select, socket, subprocess, sys
control, leave, rest = sys.argv[1], sys.argv[2] == "leave", sys.argv[3:]
def fd(name):
    return int(rest[rest.index(name) + 1]) if name in rest else None
listen, channel, guards = fd("--listen-fd"), fd("--channel-fd"), fd("--guards-fd")
hook = subprocess.Popen(["sh", "-c", "trap '' TERM; exec sleep 1000"],
                        process_group=0) if leave else None
ctl = socket.socket(socket.AF_UNIX)
ctl.connect(control)
ch = socket.socket(fileno=channel)
ctl.sendall(json.dumps({
    "pid": os.getpid(), "sid": os.getsid(0), "uid": os.getuid(),
    "listen": os.fstat(listen).st_ino,
    "guards": None if guards is None else os.pread(guards, 100, 0).decode(),
    "hook": hook and hook.pid}).encode() + b"\\n")
poller = select.poll()
for s in (ctl, ch):
    poller.register(s, select.POLLIN)
while True:
    for number, _ in poller.poll():
        source, sink = (ctl, ch) if number == ctl.fileno() else (ch, ctl)
        data = source.recv(65536)
        if not data:
            sys.exit(0)
        sink.sendall(data)
"""


class Relay:
    """The test's end: the service's control connection, one per start."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buffer = b""
        self.hello = self.lines(1)[0]

    def send(self, *messages: dict[str, Any] | bytes) -> None:
        self.conn.sendall(b"".join(m if isinstance(m, bytes) else json.dumps(m).encode() + b"\n"
                                   for m in messages))

    def lines(self, count: int, drive: Callable[[], None] = lambda: None,
              timeout: float = 30) -> list[dict[str, Any]]:
        """The next ``count`` lines root sent (driving the loop meanwhile)."""
        deadline = time.monotonic() + timeout
        while self.buffer.count(b"\n") < count:
            assert time.monotonic() < deadline, f"no line from root: {self.buffer[-300:]!r}"
            drive()
            if spawn.wait_fds([self.conn], 0.02):
                chunk = self.conn.recv(65536)
                assert chunk, "the service went"
                self.buffer += chunk
        *got, self.buffer = self.buffer.split(b"\n", count)
        return [json.loads(line) for line in got]

    def nothing_more(self) -> bool:
        return self.buffer == b"" and not spawn.wait_fds([self.conn], 0.05)


class Rig:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.control = socket.socket(socket.AF_UNIX)
        self.control.bind(str(tmp / "ctl"))
        self.control.listen()
        os.chmod(tmp / "ctl", 0o777)
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(str(tmp / "api.sock"))
        self.listener.listen()
        self.services: list[ServiceChild] = []

    def service(self, precommit: spawn.Spec | str | None = None, guards: int | None = None,
                leave: bool = False, env: dict[str, str] | None = None,
                grace: float = 30.0, **spec: Any) -> ServiceChild:
        made = ServiceChild(
            spawn.Spec(argv=(sys.executable, "-c", RELAY, str(self.tmp / "ctl"),
                             "leave" if leave else "-"), env=env or {}, cwd="/", **spec),
            listener=self.listener, guards=guards, precommit=precommit, window=60.0,
            grace=grace, log=log.get())
        self.services.append(made)
        return made

    def started(self, service: ServiceChild) -> Relay:
        """``service`` started (or restarted) and connected: its relay."""
        if service.state is State.STOPPED:
            service.start()
        deadline = time.monotonic() + 30
        while not spawn.wait_fds([self.control], 0.02):
            assert time.monotonic() < deadline, "the service never connected"
            tick(service)
        return Relay(self.control.accept()[0])

    def close(self) -> None:
        for service in self.services:
            service.stop(signal.SIGKILL, grace=0)
        self.control.close()
        self.listener.close()


@pytest.fixture
def rig() -> Iterator[Rig]:
    tmp = Path(tempfile.mkdtemp(prefix="initd-hs-"))  # (short: a socket's path is)
    tmp.chmod(0o755)
    made = Rig(tmp)
    yield made
    made.close()
    shutil.rmtree(tmp, ignore_errors=True)


def tick(service: ServiceChild) -> None:
    """One turn of the supervisor's loop for the service."""
    wait = service.timeout()
    spawn.wait_fds(service.waitables(), 0.02 if wait is None else min(wait, 0.02))
    service.tick()


def until(service: ServiceChild, done: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 120  # (a deadline on an event, under load)
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        tick(service)


def alive(pid: int) -> bool:
    fields = procfs.stat_fields(pid)
    return fields is not None and fields[0] not in (b"Z", b"X")


# --- its start


def test_it_starts_in_a_session_of_its_own_with_the_socket_and_the_guards(rig: Rig) -> None:
    guards = snapshot.made(b'{"version": 1}')
    try:
        service = rig.service(guards=guards)
        relay = rig.started(service)
    finally:
        os.close(guards)
    hello = relay.hello
    assert hello["sid"] == hello["pid"] == service.child.pid  # type: ignore[union-attr]
    assert hello["listen"] == os.fstat(rig.listener.fileno()).st_ino  # the same socket
    assert hello["guards"] == '{"version": 1}'
    assert service.state is State.STARTING  # until it says it serves
    relay.send({"op": "ready", "pid": hello["pid"]})
    until(service, lambda: service.state is State.RUNNING, "ready")


def test_it_runs_as_the_user_its_spec_names(rig: Rig, agent_user: pwd.struct_passwd) -> None:
    relay = rig.started(rig.service(account=users.lookup(agent_user.pw_name)))
    assert relay.hello["uid"] == agent_user.pw_uid


def test_the_state_is_pushed_only_when_it_changed(rig: Rig) -> None:
    service = rig.service()
    relay = rig.started(service)
    state = {"agent": {"state": "running", "ready": True}}
    service.push(state)
    service.push(state)
    service.push({"agent": None})
    assert relay.lines(2) == [{"op": "state", **state}, {"op": "state", "agent": None}]
    assert relay.nothing_more()


# --- the ops


def test_trust_is_answered_in_the_loop(rig: Rig) -> None:
    service = rig.service(env={"INITD_TRUST": "0"})
    relay = rig.started(service)
    relay.send({"op": "trust", "id": 7, "key": "/ws/.discobot/hooks/a.sh", "digest": "a" * 64})
    assert relay.lines(1, lambda: tick(service)) == [
        {"op": "reply", "id": 7, "trusted": False,
         "why": "not trusted: root was started without --trust"}]


@pytest.mark.parametrize(("precommit", "reply"), [
    (None, {"result": "no managed pre-commit chain in this workspace"}),
    ("the repository is root's: its chain is not rewritten", {
        "refused": "the repository is root's: its chain is not rewritten"}),
], ids=["none", "refused"])
def test_a_precommit_that_is_not_to_run_is_answered_at_once(
        rig: Rig, precommit: str | None, reply: dict[str, Any]) -> None:
    service = rig.service(precommit=precommit)
    relay = rig.started(service)
    relay.send({"op": "precommit", "id": 1})
    assert relay.lines(1, lambda: tick(service)) == [{"op": "reply", "id": 1, **reply}]


def rewrite(tmp: Path, script: str) -> spawn.Spec:
    return spawn.Spec(argv=("sh", "-c", script), env={"PATH": "/usr/bin:/bin"}, cwd=str(tmp))


def test_precommit_runs_one_at_a_time_and_at_most_its_burst(rig: Rig) -> None:
    gate = rig.tmp / "gate"
    service = rig.service(precommit=rewrite(rig.tmp, f"while [ ! -e {gate} ]; do sleep 0.02; "
                                                     "done; rm -f gate; echo refreshed"))
    relay = rig.started(service)
    service.ops._rewrites = Bucket(1, PRECOMMIT_BURST, clock=lambda: 0.0)  # (no refill)
    relay.send({"op": "precommit", "id": 1}, {"op": "precommit", "id": 2})
    busy = relay.lines(1, lambda: tick(service))
    assert busy == [{"op": "reply", "id": 2, "error": "busy: a rewrite of the pre-commit chain "
                                                      "is running; ask again once it is done"}]
    replies = []
    for request in range(1, PRECOMMIT_BURST + 2):
        if request > 1:
            relay.send({"op": "precommit", "id": request + 10})
        gate.touch()
        replies += relay.lines(1, lambda: tick(service))
    assert [r.get("result") for r in replies[:PRECOMMIT_BURST]] == ["refreshed"] * \
        PRECOMMIT_BURST
    assert replies[-1]["error"].startswith(f"too many: the pre-commit chain is rewritten at "
                                           f"most {PRECOMMIT_BURST} times at once")


def test_a_cancel_ends_the_rewrite_it_names(rig: Rig) -> None:
    service = rig.service(precommit=rewrite(rig.tmp, "exec sleep 1000"))
    relay = rig.started(service)
    relay.send({"op": "precommit", "id": 3})
    until(service, lambda: 3 in service._runs, "the rewrite running")
    relay.send({"op": "cancel", "id": 3})
    [reply] = relay.lines(1, lambda: tick(service))
    assert reply["id"] == 3 and "error" in reply


# --- what is not ours


@pytest.mark.parametrize("sent", [
    b"not json\n", b"[1, 2]\n", b'{"op": "run", "hook": "x"}\n',
    b'{"op": "precommit"}\n', b"x" * 70_000 + b"\n"],
    ids=["garbage", "not-an-object", "unknown-op", "no-id", "too-long"])
def test_what_is_not_ours_costs_the_service_and_a_restart(
        rig: Rig, sent: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    service = rig.service()
    relay = rig.started(service)
    first = relay.hello["pid"]
    relay.send(sent)
    until(service, lambda: service.child is None or service.child.pid != first,
          "the service killed")
    assert not alive(first)
    again = rig.started(service)  # restarted (with the backoff) with a new channel
    assert again.hello["pid"] != first and service.starts == 2
    errors = [json.loads(line) for line in capsys.readouterr().err.splitlines()
              if line.startswith("{")]
    assert [e["event"] for e in errors if e["level"] == "error"] == [
        "the hook service broke the channel protocol: restarting it"]


def test_a_request_reusing_a_running_id_is_not_ours(rig: Rig) -> None:
    service = rig.service(precommit=rewrite(rig.tmp, "exec sleep 1000"))
    relay = rig.started(service)
    relay.send({"op": "precommit", "id": 3})
    until(service, lambda: 3 in service._runs, "the rewrite running")
    first = relay.hello["pid"]
    relay.send({"op": "trust", "id": 3, "key": "k", "digest": "a" * 64})
    until(service, lambda: service.child is None or service.child.pid != first,
          "the service killed")


def test_the_channel_is_read_at_the_rate_and_the_rest_waits_unread(rig: Rig) -> None:
    """A flood of questions: BURST served at once, then BATCH at a time as the rate
    allows; meanwhile root does not even read the channel. On a clock the test moves."""
    now = [0.0]
    service = rig.service()
    relay = rig.started(service)
    service.ops.channel = Bucket(RATE, BURST, clock=lambda: now[0])
    question = {"op": "trust", "key": "/ws/x", "digest": "a" * 64}
    relay.send(*({**question, "id": n} for n in range(1, 201)))
    until(service, lambda: len(service._inbox) > 0, "a read")
    served = relay.lines(BURST)
    assert [r["id"] for r in served] == list(range(1, BURST + 1))
    assert service.channel not in service.waitables()  # what is read waits its turn
    assert service.timeout() == pytest.approx(BATCH / RATE)  # (when a batch may be served)
    tick(service)
    assert relay.nothing_more()  # no time passed: nothing more served
    now[0] += BATCH / RATE
    left = len(service._inbox)
    tick(service)
    assert len(relay.lines(min(left, BATCH))) == min(left, BATCH)
    assert relay.nothing_more()


# --- its end


def test_what_it_left_in_its_session_is_stopped_when_it_dies(
        rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    service = rig.service(leave=True, grace=0.3)
    relay = rig.started(service)
    hook = relay.hello["hook"]
    assert alive(hook) and os.getsid(hook) == relay.hello["pid"]
    os.kill(relay.hello["pid"], signal.SIGKILL)  # the agent kills its service
    until(service, lambda: not alive(hook), "the hook stopped with its session")
    said: list[str] = []
    until(service, lambda: said.append(capsys.readouterr().err) or "outlived" in "".join(said),
          "root's line about it")
    [line] = [json.loads(line) for line in "".join(said).splitlines() if "outlived" in line]
    assert (line["event"], line["processes"]) == ("the hook service's hooks outlived it: "
                                                  "stopped", 1)


def test_a_stop_ends_its_group_and_its_session_together(rig: Rig) -> None:
    service = rig.service(leave=True)
    relay = rig.started(service)
    hook = relay.hello["hook"]
    # (the stop closes its channel first: the relay may see that end and exit 0 itself
    # before the TERM reaches it; either way it is gone, with its group and session)
    assert service.stop(signal.SIGTERM, grace=0.3) in (0, 128 + signal.SIGTERM)
    assert not alive(hook) and not alive(relay.hello["pid"])
    assert service.state is State.EXITED


def test_close_removes_the_socket_and_never_follows_a_link_there(rig: Rig) -> None:
    target = rig.tmp / "target"
    target.write_text("root's")
    path = rig.tmp / "api.sock"
    path.unlink()
    path.symlink_to(target)  # what stands at the socket's path now
    rig.service().close()
    assert not path.is_symlink() and target.read_text() == "root's"
    assert rig.listener.fileno() == -1  # closed: the agent's clients see it gone


# --- what the rest of the docstring promises


def test_trust_is_answered_from_roots_store_and_about_the_workspace_only(rig: Rig) -> None:
    """With --trust, from the store named in the service's settings: a hook a person
    approved is trusted, the same hook changed since is not, and a key outside the
    service's workspace is never confirmed, whatever the store holds."""
    workspace, store = rig.tmp / "ws", rig.tmp / "root" / "trust.json"
    workspace.mkdir()
    store.parent.mkdir(mode=0o700)
    for path in (workspace / "hook.sh", rig.tmp / "elsewhere.sh"):
        path.write_text("#!/bin/sh\ntrue\n")
    inside = for_script(str(workspace / "hook.sh"))
    outside = for_script(str(rig.tmp / "elsewhere.sh"))
    assert inside is not None and outside is not None
    Trust(str(store), enforce=True).approve([inside, outside])
    service = rig.service(env={"INITD_TRUST": "1", "INITD_TRUST_FILE": str(store),
                               "INITD_WORKSPACE": str(workspace)})
    relay = rig.started(service)
    relay.send({"op": "trust", "id": 1, "key": inside.key, "digest": inside.digest},
               {"op": "trust", "id": 2, "key": inside.key, "digest": "0" * 64},
               {"op": "trust", "id": 3, "key": outside.key, "digest": outside.digest})
    replies = {r["id"]: r for r in relay.lines(3, lambda: tick(service))}
    assert replies[1] == {"op": "reply", "id": 1, "trusted": True}
    for changed_or_outside in (2, 3):
        assert replies[changed_or_outside] == {"op": "reply", "id": changed_or_outside,
                                               "trusted": False, "why": UNAPPROVED}


def test_a_restarted_service_is_told_the_state_again(rig: Rig) -> None:
    service = rig.service()
    relay = rig.started(service)
    state = {"agent": {"state": "running", "ready": True}}
    service.push(state)
    assert relay.lines(1) == [{"op": "state", **state}]
    first = relay.hello["pid"]
    os.kill(first, signal.SIGKILL)
    until(service, lambda: service.child is not None and service.child.pid != first,
          "the service restarted")
    again = rig.started(service)
    service.push(state)  # the same state: the new service knows nothing yet
    assert again.lines(1) == [{"op": "state", **state}]


def test_a_service_that_stops_reading_its_channel_costs_a_line_and_a_restart(
        rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    """The supervisor never blocks on the service: pushes it does not take (here the test
    stops reading the relay, so the relay stops reading the channel) fill the channel;
    the push that does not go closes it, says so, and the service is restarted."""
    service = rig.service()
    relay = rig.started(service)
    first = relay.hello["pid"]
    for n in range(1000):  # (a socket buffer holds far less than 1000 x 64 KiB)
        if service.channel is None:
            break
        service.push({"agent": {"n": n, "padding": "x" * 65536}})
    assert service.channel is None
    until(service, lambda: service.child is None or service.child.pid != first,
          "the service killed")
    assert not alive(first)
    assert "it does not read its channel" in capsys.readouterr().err


def test_a_dead_service_cancels_the_rewrite_it_asked_for(rig: Rig) -> None:
    pid_file = rig.tmp / "rewrite.pid"
    service = rig.service(precommit=rewrite(rig.tmp, f"echo $$ > {pid_file}; exec sleep 1000"))
    relay = rig.started(service)
    relay.send({"op": "precommit", "id": 5})
    until(service, lambda: 5 in service._runs and pid_file.exists()
          and pid_file.read_text().strip() != "", "the rewrite running")
    running = int(pid_file.read_text())
    os.kill(relay.hello["pid"], signal.SIGKILL)  # the agent kills its service
    until(service, lambda: not alive(running), "the rewrite stopped with its service")
    assert 5 not in service._runs


# --- what it counted (/metrics): the agent's word, data only


def test_what_it_counted_is_kept_and_garbage_in_it_left_out_with_no_restart(
        rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    service = rig.service()
    relay = rig.started(service)
    first = relay.hello["pid"]
    good = {"op": "metrics", "counts": {"failed": 2, "decisions": [["claude", "block", 1]]}}
    relay.send(good)
    until(service, lambda: service.counts.totals.failed == 2, "the summary taken")
    for garbage in ({"failed": "x" * 10_000}, [1, 2], None, {"durations": [[{"a": 1}] * 999]},
                    {"decisions": [["claude", f"d{n}", 10**30] for n in range(250)]},
                    {"decisions": [["claude\n\"}", "x", 1]], "failed": -1}):
        service.counts._taken = -1e9  # (each taken, not left out for the pace)
        relay.send({"op": "metrics", "counts": garbage})
        until(service, lambda: service.counts._taken > -1e9, "the garbage read")
    assert service.child is not None and service.child.pid == first  # no restart
    assert service.counts.totals.failed == 2  # never backwards
    assert service.counts.totals.decisions == {("claude", "block"): 1}
    assert "broke the channel protocol" not in capsys.readouterr().err


def test_a_metrics_message_past_the_channels_line_restarts_it_and_keeps_the_counts(
        rig: Rig) -> None:
    service = rig.service()
    relay = rig.started(service)
    first = relay.hello["pid"]
    relay.send({"op": "metrics", "counts": {"failed": 3}})
    until(service, lambda: service.counts.totals.failed == 3, "the summary taken")
    relay.send(b'{"op": "metrics", "counts": {"x": "' + b"y" * 2**17 + b'"}}\n')
    until(service, lambda: service.child is None or service.child.pid != first,
          "the service killed")
    again = rig.started(service)  # the next one counts from 0; root's totals go on
    again.send({"op": "metrics", "counts": {"failed": 1}})
    until(service, lambda: service.counts.totals.failed == 4, "the next one's added")


def test_while_a_summary_waits_for_its_pace_the_channel_is_not_read(rig: Rig) -> None:
    """A flood of summaries costs root what their pace allows: one sooner than it is
    kept, and root reads no more of the channel until it is taken (what it read already
    is served: a trust question among it is answered)."""
    service = rig.service(env={"INITD_TRUST": "0"})
    relay = rig.started(service)
    relay.send({"op": "metrics", "counts": {"failed": 1}},
               {"op": "metrics", "counts": {"failed": 2}},
               {"op": "trust", "id": 9, "key": "/ws/.discobot/hooks/a.sh", "digest": "a" * 64})
    until(service, lambda: service.counts.due(time.monotonic()) is not None, "one kept")
    assert service.counts.totals.failed == 1
    assert service.channel not in service.waitables()
    assert relay.lines(1, lambda: tick(service))[0]["id"] == 9
    until(service, lambda: service.counts.totals.failed == 2, "the one kept, taken")
    assert service.channel in service.waitables()
