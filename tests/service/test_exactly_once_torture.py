"""Exactly once, tortured: 210 requests with Idempotency-Keys (pre_tool guards, turns
whose file hook fails, Claude Code Stops that a Stop hook blocks, user turns and user
prompts), the hook service killed with -9 at seeded random points, each request sent
again with its key until it is answered (torture.py).

The service is started directly on its socket and started again after each kill, as
initd's supervisor does (which would also wait out a growing backoff between the
restarts of a service killed fifty times). It dies two ways: a hook kills it while it
runs (its "fired" line is written, its result is not), or it kills itself at the Nth
write of a request's steps (killpoint.py: before a journal line, a ledger line, a state
file, a hook's log). The random seed fixes both, so a run is the same every time.

Every hook notes the key it ran for. Passing means: no hook ran twice for a key (0
duplicates); every request was answered (0 lost); the re-prompt attempts and the Stop
loop's blocks are what a model of the answers says (0 off by one: the cap of 8 in a row,
three re-prompts per user message); and every answer says it was journaled.

The mutant: a copy of the tree in which ``Journal.entry`` yields None (no journal: what
a request sent again ran is forgotten) must make the same torture find duplicates. The
torture is a test only if it fails without the thing it tests.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hooks.support import forget_session
from tests.service import torture
from tests.service.kills import TREE

SEED = 20_240_611
EVENTS = 210
MUTANT_EVENTS = 90  # enough for a hook killed mid-run to be run again for its key


@pytest.fixture
def sid() -> Iterator[str]:
    made = f"torture-{uuid.uuid4().hex[:8]}"
    yield made
    forget_session(made)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_no_hook_runs_twice_no_answer_is_lost_no_count_is_off(tmp_path: Path, sid: str
                                                              ) -> None:
    figures = torture.run(tmp_path, sid, SEED, EVENTS)
    print(f"\ntorture: {figures.events} events, {figures.kills} kills -9 "
          f"({figures.in_hook} while a hook ran, {figures.kills - figures.in_hook} at a "
          f"write), {figures.resends} resends, {figures.starts} service starts, "
          f"{figures.seconds} s")
    assert figures.events >= 200
    assert figures.in_hook >= 10 and figures.kills - figures.in_hook >= 10  # it tortured
    assert figures.duplicates == {}, "hooks that ran twice for one key"
    assert figures.wrong == [], "counters off (re-prompt attempts, Stops in a row)"
    assert figures.unjournaled == 0


def mutant(where: Path) -> str:
    """A copy of initd/ in which Journal.entry yields None: no request is journaled."""
    tree = where / "tree"
    shutil.copytree(Path(TREE) / "initd", tree / "initd",
                    ignore=shutil.ignore_patterns("__pycache__"))
    with (tree / "initd" / "state" / "journal" / "__init__.py").open("a") as journal:
        journal.write("\n\n@contextmanager\ndef _forgotten(self, *args, **kwargs):  # mutant\n"
                      "    yield None\n\n\nJournal.entry = _forgotten  # type: ignore\n")
    return str(tree)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_torture_finds_duplicates_when_nothing_is_journaled(tmp_path: Path, sid: str
                                                                ) -> None:
    tree = mutant(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    figures = torture.run(run, sid, SEED, MUTANT_EVENTS, tree=tree)
    assert f"initd from {tree}/initd" in (run / "service.log").read_text()
    print(f"\nmutant: {figures.kills} kills, duplicates: {figures.duplicates}")
    assert figures.duplicates, "the torture did not notice that nothing was journaled"
    assert figures.unjournaled == MUTANT_EVENTS
