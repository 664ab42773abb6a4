from __future__ import annotations

import grp
import os
import pwd
import subprocess
from collections.abc import Iterator

import pytest

from tests.support.harness import Initd
from tests.support.users import AGENT, AGENT_GROUP


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
    subprocess.run(["userdel", "-r", AGENT], capture_output=True)
    subprocess.run(["groupdel", AGENT_GROUP], capture_output=True)


@pytest.fixture(scope="session")
def agent_groups(agent_user: pwd.struct_passwd) -> set[int]:
    return {agent_user.pw_gid, grp.getgrnam(AGENT_GROUP).gr_gid}
