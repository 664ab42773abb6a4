"""The suite's rule on skips (tests/support/strictskips.py), run for real: pytest with the
plugin over a directory of this test's own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.inner import run_pytest

CASES = '''
import pytest

def test_skipped_for_a_fixable_reason():
    pytest.skip("setpriv is not installed")

def test_skipped_for_what_this_machine_lacks():
    pytest.skip("cannot run here: no writable pids cgroup (cgroup v1)")

@pytest.mark.skipif(True, reason="a tool is missing")
def test_skipif_for_a_fixable_reason():
    pass

@pytest.mark.xfail(reason="a known limitation", strict=True)
def test_expected_to_fail():
    assert False

def test_passes():
    pass
'''


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="the rule applies as root (CI's user)")
def test_a_skip_fails_as_root_unless_this_machine_cannot_run_it(tmp_path: Path) -> None:
    (tmp_path / "test_cases.py").write_text(CASES)
    out = run_pytest(tmp_path, "strictskips", "-rA")
    lines = out.stdout.splitlines()
    assert out.returncode == 1, out.stdout + out.stderr
    def failed(name: str) -> bool:  # (a skipif skips in setup: failed there, an ERROR)
        return any(line.startswith(("FAILED", "ERROR")) and f"::{name}" in line
                   for line in lines)

    assert failed("test_skipped_for_a_fixable_reason"), out.stdout
    assert failed("test_skipif_for_a_fixable_reason"), out.stdout
    assert any(line.startswith("SKIPPED") and "cannot run here: no writable pids" in line
               for line in lines), out.stdout
    assert "skipped in silence: 'setpriv is not installed'" in out.stdout
    assert "skipped in silence: 'a tool is missing'" in out.stdout
    summary = lines[-1]
    assert "1 passed" in summary and "1 skipped" in summary and "1 xfailed" in summary, \
        summary
