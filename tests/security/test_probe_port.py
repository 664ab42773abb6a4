"""The probe port (``--health-port``) listens on every interface, and root's supervisor
serves it: anyone who reaches the pod is the attacker here (invariant 13). A malformed
head is answered 400 (or 431, 501) and costs nothing more; no bytes at all can stop the
probes answering; a flood of half-open connections costs root at most the probe port's
cap in descriptors, while the agent kills its own hook service, whatever root's
descriptor limit: the supervisor lives on, /healthz answers, the service comes back and
the agent's exit code is the container's."""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.support.attack import agent_script
from tests.support.harness import Initd, wait_for
from tests.support.probes import boot_with_probes, flood, get, send_raw

ROOT_FDS = 128  # root's descriptors under the flood: the probes' cap (health.MAX_WAITING,
# 64), the ones being answered, and root's own (~40, 4 for each of the probe port's 8
# servers); it held over 1,000 before
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: probe\r\n"
ATTACKS = {  # what is sent: the status it must get
    "a superscript two as the length": (HEALTHZ + b"Content-Length: \xb2\r\n\r\n", 400),
    "5,000 digits of length": (HEALTHZ + b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n",
                               400),
    "a negative length": (HEALTHZ + b"Content-Length: -1\r\n\r\n", 400),
    "a signed length": (HEALTHZ + b"Content-Length: +5\r\n\r\n", 400),
    "a hex length": (HEALTHZ + b"Content-Length: 0x10\r\n\r\n", 400),
    "a list of lengths": (HEALTHZ + b"Content-Length: 5, 5\r\n\r\n", 400),
    "two equal lengths": (HEALTHZ + b"Content-Length: 0\r\nContent-Length: 0\r\n\r\n", 400),
    "two lengths": (HEALTHZ + b"Content-Length: 1\r\nContent-Length: 2\r\n\r\n", 400),
    "a chunked body": (HEALTHZ + b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501),
    "a space before the colon": (HEALTHZ + b"Content-Length : 0\r\n\r\n", 400),
    "a folded line": (HEALTHZ + b"X-A: 1\r\n  folded\r\n\r\n", 400),
    "a NUL in a name": (HEALTHZ + b"X\x00A: 1\r\n\r\n", 400),
    "a bare CR in a value": (HEALTHZ + b"X-A: 1\rX-B: 2\r\n\r\n", 400),
    "a bare LF in a value": (HEALTHZ + b"X-A: 1\nContent-Length: 9\r\n\r\n", 400),
    "an escape in a value": (HEALTHZ + b"X-A: \x1b[2J\r\n\r\n", 400),
    "a non-ASCII method": (b"G\xc9T /healthz HTTP/1.1\r\n\r\n", 400),
    "a method of digits": (b"G3T /healthz HTTP/1.1\r\n\r\n", 400),
    "a non-ASCII path": (b"GET /health\xe9 HTTP/1.1\r\n\r\n", 400),
    "a NUL in the path, escaped": (b"GET /healthz%00 HTTP/1.1\r\n\r\n", 400),
    "a target that is no path": (b"GET healthz HTTP/1.1\r\n\r\n", 400),
    "HTTP/2's preface": (b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400),
    "a version of garbage": (b"GET /healthz HTTP/1.1garbage\r\n\r\n", 400),
    "1,000 header lines": (HEALTHZ + b"X: y\r\n" * 1000 + b"\r\n", 431),
    "a head of 70,000 bytes": (HEALTHZ + b"X: " + b"a" * 70_000 + b"\r\n\r\n", 431),
}


def nofile(soft: int) -> Callable[[], None]:
    """For preexec_fn: the soft descriptor limit initd (and all it starts) inherits."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE,
                           (soft, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    return limit


def probed(boot: Callable[..., Initd], *cmd: str, **kwargs: Any) -> tuple[Initd, int]:
    return boot_with_probes(lambda port: boot(*cmd, more=("--health-port", str(port)),
                                              **kwargs))


def test_malformed_heads_are_refused_and_the_probes_still_answer(boot) -> None:  # type: ignore[no-untyped-def]
    """One ``Content-Length: ²`` used to kill the thread that reads every request:
    root's probes never answered again for the container's life."""
    init, port = probed(boot, "sleep", "1000")
    for name, (attack, status) in ATTACKS.items():
        answer = send_raw(port, attack)
        assert answer.split(b" ", 2)[:2] == [b"HTTP/1.0", str(status).encode()], \
            f"{name}: {answer[:200]!r}"
        assert get(port)[0] == 200, f"/healthz after {name}"
    wait_for(lambda: get(port, "/readyz")[0] == 200, what="/readyz once the agent runs")
    assert "Traceback" not in init.stderr


HEADS = st.builds(
    lambda line, fields, end: line + b"".join(fields) + end,
    st.one_of(st.just(HEALTHZ), st.binary(max_size=64),
              st.text(max_size=40).map(lambda t: t.encode() + b" /healthz HTTP/1.1\r\n")),
    st.lists(st.one_of(
        st.builds(lambda name, value: name + b": " + value + b"\r\n",
                  st.sampled_from([b"Content-Length", b"Transfer-Encoding", b"Host", b"X"]),
                  st.one_of(st.binary(max_size=30),
                            st.text(max_size=10).map(str.encode),
                            st.text(max_size=10).map(lambda t: t.encode("latin-1", "replace")))),
        st.binary(max_size=40)), max_size=6),
    st.sampled_from([b"\r\n", b"\r\n\r\n", b"\r\n\r\nbody", b""]))


@pytest.mark.timeout(300)
def test_any_bytes_get_an_answer_or_a_close_and_the_probes_live_on(boot) -> None:  # type: ignore[no-untyped-def]
    init, port = probed(boot, "sleep", "1000")

    @settings(max_examples=150, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(st.one_of(HEADS, st.binary(max_size=2048)))
    @example(HEALTHZ + b"Content-Length: \xb2\r\n\r\n")
    @example(HEALTHZ + b"Content-Length: " + b"1" * 5000 + b"\r\n\r\n")
    def sent(raw: bytes) -> None:
        answer = send_raw(port, raw)
        assert answer == b"" or (answer[:9] == b"HTTP/1.0 " and answer[9:12].isdigit()), \
            answer[:200]
        wait_for(lambda: get(port)[0] == 200, timeout=60,  # (two suites may share the host)
                 what=f"/healthz after {raw[:200]!r}")

    sent()
    assert "Traceback" not in init.stderr


AGENT = """
    import os, signal, sys, time
    from tests.support.agent_side import ready, service_pid

    def until(path):
        while not os.path.exists(path):
            time.sleep(0.02)

    first = service_pid(timeout=60)
    print("service up", flush=True)
    until(sys.argv[1])
    os.kill(first, signal.SIGKILL)  # its own hook service: the agent may
    print("killed", flush=True)
    until(sys.argv[2])
    service_pid(not_pid=first, timeout=60)
    print("service back" if ready(60) else "service not ready", flush=True)
    sys.exit(7)
"""


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def restarted(port: int) -> dict[str, Any] | None:
    """/healthz's body once it says the hook service was restarted and serves again."""
    code, body = get(port, timeout=10)
    service = body.get("service") or {}
    return body if code == 200 and service.get("restarts", 0) >= 1 and \
        service.get("state") == "running" else None


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("soft_limit", [1024, 4096])
def test_a_flood_and_a_killed_service_leave_the_supervisor_alive(boot, soft_limit: int) -> None:  # type: ignore[no-untyped-def]
    """1,100 half-open connections held on the probe port (each opened again once
    dropped) while the agent kills its hook service. Root used to hold 1,024 of them: at
    a soft limit of 1,024 the service's new channel met EMFILE and the supervisor died
    (the container exited 125); above it, root's descriptors passed 1,023, where select
    raises (tests/test_polling.py pins that part whatever the flood's timing)."""
    script = agent_script(AGENT)
    kill, back = Path(script).parent / "kill", Path(script).parent / "back"
    init, port = probed(boot, sys.executable, script, str(kill), str(back),
                        preexec_fn=nofile(soft_limit))
    init.expect("^service up$", timeout=60)
    supervisor = psutil.Process(init.init_pid).children()[0].pid
    with flood(port, 1100):  # (back once it has pushed the whole flood back once)
        kill.touch()
        init.expect("^killed$")
        wait_for(lambda: restarted(port) or init.proc.poll() is not None, timeout=90,
                 what="/healthz: the hook service restarted, during the flood")
        assert init.proc.poll() is None, f"initd ended: {init.stderr[-3000:]}"
        assert fds(supervisor) < ROOT_FDS
        wait_for(lambda: get(port, "/readyz")[0] == 200, timeout=30, what="/readyz, flooded")
    back.touch()
    init.expect("^service back$", timeout=90)
    assert init.wait(60) == 7, init.stderr[-3000:]
    assert "Traceback" not in init.stderr


def met_the_limit(init: Initd) -> bool:
    """The supervisor said a start met EMFILE (the probe servers may say so of an accept
    too, when the connections another one holds took the last descriptor)."""
    return any(line.startswith("initd: cannot ") and "Too many open files" in line
               for line in init.stderr.splitlines())


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_at_the_descriptor_limit_the_service_waits_and_the_supervisor_lives(boot) -> None:  # type: ignore[no-untyped-def]
    """A limit below the probe port's cap (``--ulimit nofile=48``): the flood takes every
    descriptor root may have, and the agent kills its hook service. The new service's
    channel cannot be made (EMFILE, which used to end the supervisor): a failed start,
    said in one line and retried with the backoff, until the flood ends."""
    script = agent_script(AGENT)
    kill, back = Path(script).parent / "kill", Path(script).parent / "back"
    init, port = probed(boot, sys.executable, script, str(kill), str(back),
                        preexec_fn=nofile(48))
    init.expect("^service up$", timeout=60)
    with flood(port, 200):
        kill.touch()
        init.expect("^killed$")
        wait_for(lambda: met_the_limit(init) or restarted(port)
                 or init.proc.poll() is not None, timeout=90,
                 what="a restart that meets the limit")
        assert init.proc.poll() is None, f"initd ended: {init.stderr[-3000:]}"
        assert met_the_limit(init), \
            f"the restart met no limit, or said so otherwise: {init.stderr[-3000:]}"
        wait_for(lambda: get(port)[0] == 200, timeout=30, what="/healthz at the limit")
    back.touch()
    init.expect("^service back$", timeout=90)
    assert init.wait(60) == 7, init.stderr[-3000:]
    assert "Traceback" not in init.stderr
