"""A failed test shows the exit code and log tail of what it ran (tests/support/logtails.py),
run for real: pytest with the plugin over a directory of this test's own, whose tests
fail on a bare assertion that prints nothing of the process."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.inner import run_pytest

CASES = '''
import subprocess
import sys

from tests.support.harness import run


def test_a_subprocess_that_failed():
    out = subprocess.run(["sh", "-c", "echo the-stdout-clue; echo the-stderr-clue >&2; exit 3"],
                         capture_output=True, text=True)
    assert out.returncode == 0


def test_an_initd_that_failed():
    init = run(["--", "sh", "-c", "echo the-initd-clue; exit 4"], pidns=False)
    assert init.code == 0


def test_only_the_last_processes_are_shown():
    for n in range(12):
        subprocess.run(["sh", "-c", f"echo run-{n}"], capture_output=True)
    assert False


def test_a_passing_test_shows_nothing():
    subprocess.run(["sh", "-c", "echo the-quiet-one"], capture_output=True)


def test_the_next_test_starts_with_none_recorded():
    assert False, "nothing ran here"
'''


@pytest.mark.slow
def test_a_failed_test_shows_what_it_ran(tmp_path: Path) -> None:
    (tmp_path / "test_cases.py").write_text(CASES)
    out = run_pytest(tmp_path, "logtails", "-rA")
    text = out.stdout
    assert out.returncode == 1, text + out.stderr
    sections = {}  # each failed test's report, by name
    for block in text.split("\n___")[1:]:
        name = block.strip(" _\n").split(" ", 1)[0]
        sections[name] = block
    subprocess_failed = sections["test_a_subprocess_that_failed"]
    assert "exit 3" in subprocess_failed and "the-stdout-clue" in subprocess_failed \
        and "the-stderr-clue" in subprocess_failed, subprocess_failed
    initd_failed = sections["test_an_initd_that_failed"]
    assert "exit 4" in initd_failed and "the-initd-clue" in initd_failed, initd_failed
    last = sections["test_only_the_last_processes_are_shown"]
    assert "run-11" in last and "run-4" in last and "run-3" not in last, last
    assert "4 earlier processes not shown" in last, last
    assert "the-quiet-one" not in text
    assert "processes this test ran" not in sections["test_the_next_test_starts_with_none_recorded"]
    assert "1 passed" in text.splitlines()[-1] and "4 failed" in text.splitlines()[-1], text
