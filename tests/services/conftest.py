"""Fixtures of the services suite: an evidence box every user may write, a log directory
and a workspace of the test's own, and ``boot``: initd as PID 1 of a PID namespace, as
root with the run's agent user (tests/conftest.py's ``agent_user``), the image's config
file written into tmp_path. Nothing is written to the real home, no port is fixed."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hooks.support import forget_session
from tests.services.support import Boot, boot_args, evidence_dir, standin, write_config
from tests.support.harness import Initd


@pytest.fixture
def box() -> Iterator[Path]:
    path = evidence_dir()
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def logdir() -> Iterator[Path]:
    """``services_log_dir``: root's, 0755 (never /var/log/initd: hermetic)."""
    path = Path(tempfile.mkdtemp(prefix="initd-svc-logs-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def ws(agent_user: pwd.struct_passwd) -> Iterator[Path]:
    """A workspace the agent owns (pytest's tmp_path is root's 0700: not the agent's)."""
    path = Path(tempfile.mkdtemp(prefix="initd-svc-ws-"))
    path.chmod(0o755)
    os.chown(path, agent_user.pw_uid, agent_user.pw_gid)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def sid(agent_user: pwd.struct_passwd) -> Iterator[str]:
    session = f"svc-{uuid.uuid4().hex[:8]}"
    yield session
    forget_session(session, agent_user.pw_dir)


@pytest.fixture
def image() -> Iterator[str]:
    """The image's hook directory: empty (so /etc/initd/hooks.d is never read)."""
    path = tempfile.mkdtemp(prefix="initd-svc-image-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def boot(initd, agent_user: pwd.struct_passwd, tmp_path: Path, box: Path, logdir: Path,  # type: ignore[no-untyped-def]
         ws: Path, sid: str, image: str) -> Boot:
    """``boot(services, *cmd, settings={...}, more=(...), **Initd's)``: the config file
    with ``services`` (and ``services_log_dir``: the test's), then initd over it; CMD is
    the stand-in named "agent" unless given."""
    def start(services: dict[str, Any], *cmd: str, settings: dict[str, object] | None = None,
              more: tuple[str, ...] = (), **kwargs: object) -> Initd:
        config = write_config(tmp_path, services, services_log_dir=str(logdir),
                              **(settings or {}))
        command = list(cmd) or standin(box, "agent")
        args = boot_args(config, agent_user.pw_name, ws, sid, image, *more)
        return initd([*args, "--", *command], **kwargs)  # type: ignore[no-any-return]
    return start
