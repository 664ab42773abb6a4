"""--restart: backoff between restarts, a crash-loop limit, and the last code at the end."""

from __future__ import annotations

import itertools
import signal
import time

import pytest

from tests.support.harness import run

STAMP = 'date +%s.%N; '


def gaps(lines: list[str]) -> list[float]:
    times = [float(line) for line in lines]
    return [round(b - a, 1) for a, b in itertools.pairwise(times)]


def test_crash_loop_backs_off_and_gives_up_with_last_code() -> None:
    init = run(["--restart", "on-failure", "--max-restarts", "3", "--",
                "sh", "-c", STAMP + "exit 4"], timeout=40)
    assert init.code == 4, init.stderr
    assert len(init.stdout_lines) == 4  # the first run and three restarts
    for got, want in zip(gaps(init.stdout_lines), [1, 2, 4], strict=True):
        assert want <= got < want + 0.8
    assert "crash loop: giving up" in init.stderr


def test_on_failure_restarts_until_success(tmp_path) -> None:
    counter = tmp_path / "runs"
    script = f'echo x >> {counter}; [ "$(wc -l < {counter})" -ge 3 ]'
    init = run(["--restart", "on-failure", "--", "sh", "-c", script], timeout=30)
    assert init.code == 0
    assert counter.read_text().count("x") == 3


def test_on_failure_does_not_restart_a_success() -> None:
    init = run(["--restart", "on-failure", "--", "sh", "-c", "echo once"])
    assert (init.code, init.stdout_lines) == (0, ["once"])


def test_always_restarts_a_success_too() -> None:
    init = run(["--restart", "always", "--max-restarts", "1", "--", "sh", "-c", "echo run"])
    assert (init.code, init.stdout_lines) == (0, ["run", "run"])


def test_never_is_the_default() -> None:
    init = run(["--", "sh", "-c", "echo run; exit 9"])
    assert (init.code, init.stdout_lines) == (9, ["run"])


@pytest.mark.parametrize("policy", ["on-failure", "always"])
def test_term_during_backoff_ends_promptly_with_last_code(initd, policy: str) -> None:
    init = initd(["--restart", policy, "--", "sh", "-c", "echo run; exit 6"])
    init.expect("^run$")
    time.sleep(0.2)  # now in the 1 s backoff
    sent = time.monotonic()
    init.signal(signal.SIGTERM)
    assert init.wait() == 6
    assert time.monotonic() - sent < 0.9
