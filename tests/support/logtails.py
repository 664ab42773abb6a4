"""A test's failure says why: when a test fails, its report ends with the exit code and the
log tail of every process the test ran (each initd it started, and each process whose
output it captured), newest last, whatever the failing assertion printed itself.

A plugin of its own (conftest.py loads it), so that a test can run pytest with it on a
directory of its own. It records; it changes nothing a process does: ``communicate`` (what
``subprocess.run`` and ``check_output`` use) is wrapped to keep a tail of what it returned,
and the harness's ``Initd`` registers itself with ``started``.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Generator
from typing import Any

import pytest

TAIL = 3000  # characters kept of each stream
SHOWN = 8  # processes shown, the newest

_ran: list[Callable[[], str]] = []


def started(describe: Callable[[], str]) -> None:
    """Register a process the test started: ``describe()`` is read only if the test fails."""
    _ran.append(describe)


def tail(text: str | bytes | None, limit: int = TAIL) -> str:
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text[-limit * 4:].decode(errors="replace")
    return text[-limit:] if len(text) <= limit else "…" + text[-limit:]


def command(args: Any) -> str:
    if isinstance(args, (str, bytes)):
        return args if isinstance(args, str) else args.decode(errors="replace")
    return shlex.join(str(a) for a in args)


def _describe(args: Any, code: int | None, out: Any, err: Any) -> Callable[[], str]:
    cmd, out, err = command(args), tail(out), tail(err)  # (tails kept now, small)
    return lambda: "\n".join(
        [f"$ {cmd[:500]}", f"  exit {code}"]
        + ([f"  stdout (its end):\n{out}"] if out else [])
        + ([f"  stderr (its end):\n{err}"] if err else []))


_communicate = subprocess.Popen.communicate


def _recording(self: subprocess.Popen[Any], input: Any = None,
               timeout: float | None = None) -> tuple[Any, Any]:
    out, err = _communicate(self, input, timeout)
    if self.stdout is not None or self.stderr is not None or out or err:
        started(_describe(self.args, self.returncode, out, err))
    return out, err


subprocess.Popen.communicate = _recording  # type: ignore[method-assign]


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    _ran.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]
                              ) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not report.failed or not _ran:
        return
    shown = []
    for describe in _ran[-SHOWN:]:
        try:
            shown.append(describe())
        except Exception as e:  # a describer must never hide the failure itself
            shown.append(f"(could not describe a process: {e!r})")
    more = len(_ran) - len(shown)
    head = f"({more} earlier processes not shown)\n" if more > 0 else ""
    report.sections.append((f"processes this test ran, the last {len(shown)}: exit codes "
                            "and log tails", head + "\n\n".join(shown)))
