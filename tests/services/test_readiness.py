"""Conformance: readiness gates the start of what depends on it (SERVICES-SPEC.md,
"ready:" and "after:"), each readiness protocol by its reference's letter.

References, as read (the snapshot's commit and date):

- s6, doc/notifywhenup.html and doc/servicedir.html (github:skarnet/s6 d73e657, 2026-06-22;
  https://skarnet.org/software/s6/notifywhenup.html): "daemons can simply write a line to
  a file descriptor of their choice, then close that file descriptor, when they're ready to
  serve"; notification-fd "must only contain a nonzero unsigned integer, which is the
  number of the file descriptor that the service writes its readiness notification to".
- systemd, man/sd_notify.xml (github:systemd/systemd 019123a;
  https://www.freedesktop.org/software/systemd/man/latest/sd_notify.html): "These
  functions send a single datagram with the state string as payload to the socket
  referenced in the $NOTIFY_SOCKET environment variable"; READY=1 "Tells the service
  manager that service startup is finished"; "Unknown assignments are ignored".
- Compose spec, 05-services.md "depends_on" (github:compose-spec/compose-spec a076fad,
  2026-06-16; https://github.com/compose-spec/compose-spec/blob/main/05-services.md):
  "service_healthy: Specifies that a dependency is expected to be "healthy" ... before
  starting a dependent service".
- s6-rc, doc/overview.html (github:skarnet/s6-rc 50f4e65, 2026-06-22;
  https://skarnet.org/software/s6-rc/overview.html): "If service A has been declared as
  depending on service B, then s6-rc will make sure to never start A until it knows that
  B is up".

Each case: ``db`` is started and says everything but its readiness (the s6 line without
its newline, an sd_notify STATUS= without READY=1, an HTTP port answering 503), then
waits for the test's gate; ``web`` is ``after: [db]``; ``witness`` depends on nothing.
While the gate is shut, web is ``waiting`` and has not started although witness (started
beside it) already runs; once opened, db says "ready" before doing it, so web's start
line can only come after it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.services.support import Boot, count, events, standin, wait_event, wait_state
from tests.support.harness import free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def readiness(kind: str, box: Path, port: int) -> tuple[dict[str, object], str]:
    """(the service's ``ready:``, the stand-in's --ready) for ``kind``."""
    kinds: dict[str, tuple[dict[str, object], str]] = {
        "notify_fd": ({"notify_fd": 3}, "fd:3"),  # s6: a line on fd 3
        "notify": ({"notify": True}, "notify"),  # sd_notify: READY=1 on $NOTIFY_SOCKET
        "port": ({"port": port}, f"port:{port}"),  # a TCP connect succeeds
        "http": ({"http": f"http://127.0.0.1:{port}/health"}, f"http:{port}"),  # 200-399
        "exec": ({"exec": ["sh", "-c", f"test -e {box}/db-up"]}, f"file:{box}/db-up"),
    }
    return kinds[kind]


@pytest.mark.parametrize("kind", ["notify_fd", "notify", "port", "http", "exec"])
def test_a_dependent_starts_only_once_its_dependency_is_ready(boot: Boot, box: Path,
                                                              kind: str) -> None:
    ready, how = readiness(kind, box, free_port())
    services = {
        "db": {"command": standin(box, "db", "--gate", str(box / "go"), "--ready", how),
               "ready": ready, "ready_timeout": 120},
        "web": {"command": standin(box, "web"), "after": ["db"]},
        "witness": {"command": standin(box, "witness")},
    }
    init = boot(services)
    wait_event(box, r"db start \d+")
    assert wait_state(init, "witness", "running")
    assert wait_state(init, "web", "waiting")
    assert wait_state(init, "db", "starting")  # started, not ready: neither is web
    assert count(box, r"web start \d+") == 0
    (box / "go").touch()
    wait_event(box, r"web start \d+")
    lines = events(box)
    assert lines.index("db ready") < next(i for i, line in enumerate(lines)
                                          if line.startswith("web start"))
    assert wait_state(init, "db", "running")["pid"] is not None


def test_notify_socket_is_set_only_for_a_notify_service(boot: Boot, box: Path) -> None:
    """SERVICES-SPEC.md: "NOTIFY_SOCKET is set only for notify: true services". (systemd
    sets it for Type=notify units; sd_notify is a no-op without it: "If $NOTIFY_SOCKET
    was not set and hence no status message could be sent, 0 is returned".)"""
    services = {"plain": {"command": standin(box, "plain")},
                "told": {"command": standin(box, "told", "--ready", "notify"),
                         "ready": {"notify": True}}}
    init = boot(services)
    assert wait_state(init, "told", "running")
    wait_event(box, r"plain start \d+")
    assert (box / "plain.notify").read_text() == "-"
    assert (box / "told.notify").read_text() not in ("", "-")


def test_a_service_with_no_ready_is_ready_once_started(boot: Boot, box: Path) -> None:
    """s6-rc, doc/s6-rc.html (50f4e65, 2026-06-22;
    https://skarnet.org/software/s6-rc/s6-rc.html): without readiness notification "the
    transition will be considered successful as soon as the daemon is up";
    SERVICES-SPEC.md: "none = ready as soon as started"."""
    services = {"plain": {"command": standin(box, "plain", "--gate", str(box / "never"))},
                "next": {"command": standin(box, "next"), "after": ["plain"]}}
    init = boot(services)
    wait_event(box, r"next start \d+")
    assert wait_state(init, "plain", "running")
