"""The suite's parallel rule, run for real: pytest with pytest-xdist and the xdistgroups
plugin over a directory of this test's own. The tests of one xdist_group run on one
worker, and a module fixture they share is set up once; the other tests are spread."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.inner import run_pytest

CASES = '''
import os

import pytest

SETUPS = os.environ["SETUPS"]


@pytest.fixture(scope="module")
def costly():
    with open(SETUPS, "a") as f:
        f.write("set up\\n")


@pytest.mark.xdist_group("costly")
@pytest.mark.parametrize("n", range(6))
def test_grouped(costly, n):
    pass


@pytest.mark.parametrize("n", range(6))
def test_spread(n):
    pass
'''


# a deadline, not a speed: an inner pytest of three xdist workers, each importing the
# suite's plugins, took over a minute beside two whole suites on two cores
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_group_keeps_to_one_worker_and_sets_its_fixture_up_once(tmp_path: Path) -> None:
    (tmp_path / "test_cases.py").write_text(CASES)
    setups = tmp_path / "setups"
    out = run_pytest(tmp_path, "xdistgroups", "-p", "xdist.plugin", "-n", "3",
                     "--dist", "loadgroup", "-v", env={"SETUPS": str(setups)}, timeout=280)
    assert out.returncode == 0, out.stdout + out.stderr
    ran = re.findall(r"\[(gw\d+)\] .*PASSED \S*::(test_\w+)", out.stdout)
    grouped = {worker for worker, name in ran if name == "test_grouped"}
    assert len([1 for _, name in ran if name == "test_grouped"]) == 6, out.stdout
    assert len(grouped) == 1, out.stdout
    assert setups.read_text() == "set up\n", out.stdout
