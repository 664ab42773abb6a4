"""A kubelet's ``httpGet`` probes of ``/healthz``, run inside the network namespace of the
initd it probes (``nsenter --net=...``): ``kubelet.py PORT PROBES [THRESHOLD]``.

Each probe is what the kubelet makes: a fresh connection, ``GET /healthz`` with the
headers it sends, and ``timeoutSeconds: 1``, the default, for all of it; a status from
200 to 399 passes. Kubernetes' Probe reference (core/v1,
https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#Probe):
"timeoutSeconds: Number of seconds after which the probe times out. Defaults to 1
second", "failureThreshold: Minimum consecutive failures for the probe to be considered
failed after having succeeded. Defaults to 3"; the headers and the statuses, from
https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/#http-probes
("User-Agent: kube-probe/1.xx", "Accept: */*"; "Any code greater than or equal to 200
and less than 400 indicates success").
The probes go back to back, until PROBES were made or THRESHOLD failed in a row (the
kubelet acts then: there is no need to go on). Prints one JSON line: how many were made,
how many failed, the longest run of failures, which one failed first, and why they
failed.

``kubelet.py PORT --until-ok SECONDS``: probes until one passes (exit 0), or not within
SECONDS (exit 1).
"""

from __future__ import annotations

import json
import socket
import sys
import time
from collections import Counter

TIMEOUT = 1.0  # timeoutSeconds' default
REQUEST = (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: kube-probe/1.33\r\n"
           b"Accept: */*\r\nConnection: close\r\n\r\n")


def probe(port: int) -> str:
    """"ok", or why the probe failed."""
    deadline = time.monotonic() + TIMEOUT
    stage = "connect"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as conn:
            stage = "answer"
            conn.sendall(REQUEST)
            answer = b""
            while True:
                conn.settimeout(max(deadline - time.monotonic(), 0.001))
                chunk = conn.recv(65536)
                if not chunk:
                    break
                answer += chunk
    except TimeoutError:
        return f"no {stage} within {TIMEOUT:g} s"
    except OSError as err:
        return f"{stage}: {type(err).__name__}"
    status = answer.split(b" ", 2)[1:2]
    if not answer:
        return "closed without an answer"
    return "ok" if status and status[0].isdigit() and 200 <= int(status[0]) < 400 \
        else f"answered {answer[:12]!r}"


def until_ok(port: int, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if probe(port) == "ok":
            return 0
        time.sleep(0.05)
    return 1


def probes(port: int, count: int, threshold: int) -> dict[str, object]:
    why: Counter[str] = Counter()
    made = failed = run = longest = 0
    first = None
    while made < count and run < threshold:
        result = probe(port)
        made += 1
        if result == "ok":
            run = 0
            continue
        first = first or made
        why[result] += 1
        failed += 1
        run += 1
        longest = max(longest, run)
    return {"probes": made, "failed": failed, "in_a_row": longest, "first_failed": first,
            "why": dict(why)}


if __name__ == "__main__":
    if sys.argv[2] == "--until-ok":
        sys.exit(until_ok(int(sys.argv[1]), float(sys.argv[3])))
    threshold = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    print(json.dumps(probes(int(sys.argv[1]), int(sys.argv[2]), threshold)), flush=True)
