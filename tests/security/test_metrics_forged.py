"""What the hook service tells root it counted (a ``metrics`` message) is the agent's:
the agent ptraces its own service and takes its channel (pidfd_getfd). Forged counts,
garbage in them, label values made to break the text format, a flood, a line past the
channel's bound: root's /metrics stays readable and bounded, the supervisor keeps
forwarding signals, and the container ends with the agent's own code. A lie within the
bounds is shown as the service's word (each family's help says so), never more."""

from __future__ import annotations

import json
import signal
import sys
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from initd.state.hookcounts import MAX_COUNT, MAX_SERIES
from tests.support.attack import agent_script
from tests.support.probes import boot_with_probes

ATTACK = """
    import json, signal, sys, time
    from tests.support.agent_side import channel_of, ready, service_pid

    got = []
    signal.signal(signal.SIGUSR1, lambda *_: got.append(1))
    assert ready(30)
    first = service_pid()
    channel = channel_of(first)
    channel.settimeout(10)
    def send(counts):
        channel.sendall(json.dumps({"op": "metrics", "counts": counts}).encode() + b"\\n")
    for counts in (
            {"failed": 2**70, "replayed": -1, "timedOut": 1e308, "journaled": "7"},
            {"decisions": [["claude", "x" + str(n) + '"}\\n# TYPE evil counter', 1]
                           for n in range(250)]},
            {"decisions": [[f"f{n}", "block", 2**53] for n in range(250)]},  # (under 16 KiB)
            {"durations": [["claude", "pre_tool", [2**53] * 15, float("inf")]]},
            {"durations": [["claude", "pre_tool", [1] * 15, 0.5]] * 3},
            "garbage", [], None):
        send(counts)
        time.sleep(0.6)  # (root takes one a half second: each of these is read)
    for _ in range(300):  # a flood (read at the channel's rate), taken twice a second at most
        send({"failed": 1})
    print("forged", flush=True)
    while not got:
        time.sleep(0.01)
    got.clear()
    channel.sendall(b'{"op": "metrics", "counts": {"x": "' + b"y" * 200_000 + b'"}}\\n')
    service_pid(not_pid=first, timeout=30)  # past the line's bound: a new service
    print("service restarted" if ready(30) else "not ready", flush=True)
    while not got:
        time.sleep(0.01)
    print("got USR1", flush=True)
    sys.exit(7)
"""


def metrics(port: int) -> tuple[str, dict[str, list]]:  # type: ignore[type-arg]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return text, {f.name: f.samples for f in text_string_to_metric_families(text)}


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_forged_counts_cannot_break_metrics_nor_the_supervisor(boot) -> None:  # type: ignore[no-untyped-def]
    script = agent_script(ATTACK)
    init, port = boot_with_probes(lambda probe: boot(  # type: ignore[no-any-return]
        sys.executable, script, more=("--grace", "1", "--health-port", str(probe))))
    init.expect("^forged$", timeout=120)
    text, found = metrics(port)
    assert "evil" not in text  # (a label value past the pattern is left out)
    decisions = found["initd_decisions"]
    assert len(decisions) <= MAX_SERIES * 2  # (each with its _created)
    assert all(s.value <= MAX_COUNT for f in found.values() for s in f)
    assert len(text) < 256 * 1024
    init.signal(signal.SIGUSR1)  # still forwarded
    init.expect("^service restarted$", timeout=60)
    after = metrics(port)[1]
    assert after["initd_decisions"] == decisions or len(after["initd_decisions"]) <= \
        MAX_SERIES * 2  # (kept, never more)
    assert json.dumps([s.value for s in after["initd_hooks_failed"]])  # still there
    init.signal(signal.SIGUSR1)
    assert init.wait(timeout=60) == 7, init.stderr[-3000:]
    assert "Traceback" not in init.stderr
