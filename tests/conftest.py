from __future__ import annotations

import atexit
import grp
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.config import log
from tests.support.harness import Initd  # (neither reads HOME when imported)
from tests.support.users import AGENT, AGENT_GROUP, remove_user

# no test is skipped in silence; a failed test shows the log tails of what it ran; an
# xdist_group keeps to one worker under pytest 9.2 too
pytest_plugins = ["tests.support.strictskips", "tests.support.logtails",
                  "tests.support.xdistgroups"]

# Hermetic: a HOME of the run's own, set before any test module is imported (their
# helpers read it), so that initd's state for hooks run as the tests' own user (the
# hooks' ~/.discobot) never lands in the real home. the_real_home_is_untouched
# below fails the run if it does.
REAL_HOME = pwd.getpwuid(os.geteuid()).pw_dir
HOME = tempfile.mkdtemp(prefix="initd-tests-home-")
os.environ["HOME"] = HOME
atexit.register(shutil.rmtree, HOME, ignore_errors=True)  # (xdist's controller runs no test)

TESTS = Path(__file__).resolve().parent
# `make check` leaves these out (pyproject.toml declares the markers): what needs podman
# and the images, what makes users of its own
CONTAINER_DIRS = (TESTS / "e2e", TESTS / "bundle")
USER_FIXTURES = {"agent_user", "agent"}


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """-n auto: two workers per core. Most tests wait on processes (a hook, a grace, a
    restart's backoff) more than they compute, so a second worker per core fills the
    waits (on two cores, quiet: 7 1/2 min with two workers, 5 1/2 with four)."""
    return 2 * len(os.sched_getaffinity(0))  # (the cores this run may use, not the host's)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = item.path
        if any(path.is_relative_to(d) for d in CONTAINER_DIRS):
            item.add_marker(pytest.mark.container)
        elif USER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.users)
    # the long ones first: in parallel, a long test started last is a run's tail, alone on
    # one worker while the others idle (otherwise in the order written: a stable sort)
    items.sort(key=lambda item: not (item.get_closest_marker("slow")
                                     or item.get_closest_marker("container")))


@pytest.fixture
def initd() -> Iterator[type[Initd]]:
    """Start initd with ``initd([...])``; anything still running is killed afterwards."""
    started: list[Initd] = []

    def start(*args: object, **kwargs: object) -> Initd:
        init = Initd(*args, **kwargs)  # type: ignore[arg-type]
        started.append(init)
        return init

    yield start  # type: ignore[misc]
    for init in started:
        init.kill()


@pytest.fixture(scope="session")
def agent_user() -> Iterator[pwd.struct_passwd]:
    """A real user made for the tests (useradd), in one extra group; removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("creating users needs root")  # CI runs as root; this is for laptops
    subprocess.run(["groupadd", AGENT_GROUP], check=True)
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh",
                    "--groups", AGENT_GROUP, AGENT], check=True)
    yield pwd.getpwnam(AGENT)
    remove_user(AGENT, AGENT_GROUP)


@pytest.fixture(scope="session")
def agent_groups(agent_user: pwd.struct_passwd) -> set[int]:
    return {agent_user.pw_gid, grp.getgrnam(AGENT_GROUP).gr_gid}


def _real_state() -> list[str]:
    found = []
    for sub in (".discobot", os.path.join(".discobot", "sessions")):
        try:
            found += [f"{sub}/{name}" for name in sorted(os.listdir(os.path.join(REAL_HOME, sub)))]
        except OSError:
            pass
    return found


def _real_mtimes() -> dict[str, int | None]:
    """When the real ~/.discobot and its sessions/ last gained or lost an entry: what a
    test that wrote there and cleaned up after itself still changes."""
    mtimes: dict[str, int | None] = {}
    for sub in (".discobot", os.path.join(".discobot", "sessions")):
        try:
            mtimes[sub] = os.stat(os.path.join(REAL_HOME, sub)).st_mtime_ns
        except OSError:
            mtimes[sub] = None
    return mtimes


@pytest.fixture(scope="session", autouse=True)
def the_real_home_is_untouched() -> Iterator[None]:
    """Fails the run when any test wrote into the real ~/.discobot, even one that
    removed what it wrote (the directories' mtimes)."""
    before, mtimes = _real_state(), _real_mtimes()
    yield
    shutil.rmtree(HOME, ignore_errors=True)
    added = sorted(set(_real_state()) - set(before))
    assert added == [], f"tests wrote into the real home {REAL_HOME}: {added}"
    changed = [sub for sub, mtime in _real_mtimes().items() if mtime != mtimes[sub]]
    assert changed == [], (f"tests changed {', '.join(changed)} in the real home "
                           f"{REAL_HOME} (and removed what they wrote)")


@pytest.fixture(autouse=True)
def the_log_starts_at_its_default() -> Iterator[None]:
    """A verb's main run in the test's own process configures that process's log (``run``
    of precommit: errors only): the next test in the worker must not lose its warnings."""
    yield
    log.configure(0, "json")  # the default: warnings and up, JSON lines
