"""No test is skipped in silence: as root (CI, and `make test` on a fresh Debian machine,
where every tool the suite needs can be installed), a skipped test is a failure unless
its reason starts with CANNOT, naming what this machine lacks and no install can give it
(podman unable to run here, a cgroup v1 host). Without root, the tests that need it are
skipped, and the summary (-ra) lists each with its reason.

A plugin of its own (conftest.py loads it) so that a test can run pytest with it on a
directory of its own."""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

CANNOT = "cannot run here: "


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]
                              ) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail") or os.geteuid() != 0:
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    reason = reason.removeprefix("Skipped: ")
    if reason.startswith(CANNOT):
        return
    report.outcome = "failed"
    report.longrepr = (f"skipped in silence: {reason!r}. As root a skip fails the suite "
                       f"unless its reason starts with {CANNOT!r} and names what this "
                       "machine lacks and no install can give it")
