"""The private channel's far end is the agent's (it may ptrace its own hook service and
take the channel's descriptor with pidfd_getfd): whatever arrives there, the supervisor
logs one line, closes that channel and restarts the service; it never dies, wedges, or
stops forwarding signals, and the container still ends with the agent's own code."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from tests.support.attack import agent_script

ATTACK = """
    import os, signal, sys, time
    from tests.support.agent_side import channel_of, ready, service_pid

    got = []
    signal.signal(signal.SIGUSR1, lambda *_: got.append(1))
    with open(sys.argv[1], "rb") as f:  # (a file: a 1 MiB argument is past ARG_MAX)
        payload = f.read()
    repeat = int(sys.argv[2])
    first = service_pid()
    channel = channel_of(first)
    channel.settimeout(10)
    try:
        for _ in range(repeat):
            channel.sendall(payload)
    except OSError:
        pass  # the supervisor closed the channel: that is the point
    channel.close()
    service_pid(not_pid=first, timeout=30)  # a new service
    print("service restarted" if ready(30) else "not ready", flush=True)
    print("waiting for USR1", flush=True)
    deadline = time.monotonic() + 20
    while not got and time.monotonic() < deadline:
        time.sleep(0.01)
    print("got USR1" if got else "no USR1", flush=True)
    sys.exit(7)
"""

GARBAGE = {
    "unhashable id": (b'{"op": "precommit", "id": [1]}\n', 1),
    "unhashable cancel": (b'{"op": "cancel", "id": {"a": 1}}\n', 1),
    "deep nesting": (b"[" * 100_000 + b"]" * 100_000 + b"\n", 1),
    "not an object": (b"[1, 2, 3]\n", 1),
    "not json": (b"\xff\xfe garbage\n", 1),
    "unknown op": (b'{"op": "exec", "argv": ["sh"]}\n', 1),
    # root runs no hook for the service any more (invariant 11): an op gone, not ignored
    "root hook asked for": (b'{"op": "root-hook", "id": 1, "hook": "10-root"}\n', 1),
    "a field precommit lacks": (b'{"op": "precommit", "id": 1, "hook": "x"}\n', 1),
    # trust: a question about one hash, nothing more (supervisor/requests.py)
    "trust without a sha256": (b'{"op": "trust", "id": 1, "key": "k", "digest": "0"}\n', 1),
    "trust with a huge key": (b'{"op": "trust", "id": 1, "key": "' + b"k" * 9000
                              + b'", "digest": "' + b"0" * 64 + b'"}\n', 1),
    "trust with a field more": (b'{"op": "trust", "id": 1, "key": "k", "digest": "'
                                + b"0" * 64 + b'", "approve": true}\n', 1),
    "huge line": (b"x" * 2**20, 12),
    "request flood": (b'{"op": "precommit", "id": 1}\n', 20_000),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(GARBAGE))
def test_garbage_on_the_channel_restarts_the_service_never_initd(boot, name: str) -> None:
    payload, repeat = GARBAGE[name]
    script = agent_script(ATTACK)
    garbage = os.path.join(os.path.dirname(script), "garbage")
    with open(garbage, "wb") as f:
        f.write(payload)
    os.chmod(garbage, 0o644)
    init = boot(sys.executable, script, garbage, str(repeat), more=("--grace", "1"))
    init.expect("^service restarted$", timeout=60)
    init.expect("^waiting for USR1$")
    init.signal(signal.SIGUSR1)  # still forwarded to the agent
    assert init.wait(timeout=60) == 7, init.stderr[-3000:]
    assert init.stdout_lines[-1] == "got USR1"
    assert "Traceback" not in init.stderr
