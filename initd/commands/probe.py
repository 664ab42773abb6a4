"""``initd ready`` and ``initd health`` as exec probes run them: every few seconds, in
every pod, with stdout a pipe. This path imports ``os``, ``sys`` and the client's
``_socket`` and nothing else: no argparse, json or typing, each of which costs a probe
more than its whole exchange with the service. It takes the probe's plain form only
(``--socket PATH``, ``--timeout SECONDS``) and prints the answer as the service sent it
(one line of JSON); anything else (``--help``, an option it does not know, a value it
cannot read, a terminal to print to) goes to the verb's full parser in
``commands/health.py``, which says what is wrong or prints for a person.
"""

from __future__ import annotations

import sys

from initd.commands import client

PATHS = {"ready": "/v1/ready", "health": "/v1/health"}
# What initd's server never sends (compact, ASCII-only JSON) and a probe does not echo: the
# service runs as the agent, and the probe may run as root at an operator's terminal.
UNPRINTABLE = bytes([*range(0x20), *range(0x7F, 0x100)])
# A probe that hangs is a failed probe, and it must end before the kubelet's own
# timeoutSeconds (5 in images/k8s/agent.yaml; Kubernetes' default is 1: pass --timeout).
PROBE_TIMEOUT = 2.0


def run(verb: str, argv: list[str]) -> int | None:
    """The exit code, or None: not the plain form, for the full parser."""
    options = _plain(argv)
    if options is None or sys.stdout.isatty():
        return None
    sock, timeout = options
    code, body = client.raw("GET", PATHS[verb], sock=sock, timeout=timeout)
    if code != 200:
        return _refused(body)
    body = body.rstrip(b"\n")
    if len(body.translate(None, UNPRINTABLE)) != len(body):
        print("initd: the answer is not shown: it holds what initd's service never sends "
              "(control characters, not ASCII)", file=sys.stderr)
        return 0  # (the exit code is the answer, and 200 said yes)
    try:
        sys.stdout.buffer.write(body + b"\n")
        sys.stdout.flush()
    except OSError:
        pass  # nobody reads the answer (the kubelet reads only the exit code)
    return 0


def _plain(argv: list[str]) -> tuple[str | None, float] | None:
    """(socket, timeout) from ``--socket PATH``/``--socket=PATH`` and ``--timeout S``/
    ``--timeout=S``, each at most once; None for anything else."""
    found: dict[str, str] = {}
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        name, eq, value = arg.partition("=")
        if name not in ("--socket", "--timeout") or name in found:
            return None
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
        found[name] = value
    try:
        timeout = float(found.get("--timeout", PROBE_TIMEOUT))
    except ValueError:
        return None  # ("2s", "500ms": the full parser reads those)
    if not 0 < timeout < float("inf") or not found.get("--socket", "x"):
        return None
    return found.get("--socket"), timeout


def _refused(body: bytes) -> int:
    """A refusal (503: not ready) says why, as every verb does (``initd: reason`` on
    stderr, exit 1). A probe that fails pays for json; one that passes does not."""
    import json

    try:
        answer = json.loads(body)
    except (ValueError, RecursionError):  # (the answer is the agent's service's)
        answer = body.decode(errors="replace")
    print(client.reason(answer), file=sys.stderr)
    return 1
