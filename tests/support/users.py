"""The test run's own agent user: a name no other run on this host uses, so two suites at
once never delete each other's user (a fixed name once did: "unknown user")."""

from __future__ import annotations

import grp
import pwd
import secrets
import subprocess
import time
from collections.abc import Callable

_RUN = secrets.token_hex(3)
AGENT = f"initd-test-{_RUN}"
AGENT_GROUP = f"initd-tx-{_RUN}"
REMOVE_WAIT = 60.0  # seconds: a deadline against a lock held for ever, not a pace


def remove_user(name: str, group: str | None = None) -> None:
    """Kill the user's processes and delete it (its home too), then ``group``: again until
    both are gone. pkill only sends the KILL, and userdel refuses a user whose process
    still runs; another worker's useradd may hold /etc/passwd's lock. Tried once, a green
    run left three users on the host."""
    deadline = time.monotonic() + REMOVE_WAIT
    while True:
        subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
        out = subprocess.run(["userdel", "--remove", name], capture_output=True, text=True)
        if not _exists(pwd.getpwnam, name):
            break
        if time.monotonic() >= deadline:
            raise AssertionError(f"test user {name} cannot be removed: {out.stderr.strip()}")
        time.sleep(0.1)
    while group is not None and _exists(grp.getgrnam, group):
        out = subprocess.run(["groupdel", group], capture_output=True, text=True)
        if _exists(grp.getgrnam, group) and time.monotonic() >= deadline:
            raise AssertionError(f"test group {group} cannot be removed: {out.stderr.strip()}")
        time.sleep(0.1)


def _exists(lookup: Callable[[str], object], name: str) -> bool:
    try:
        lookup(name)
    except KeyError:
        return False
    return True
