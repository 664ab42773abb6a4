"""``initd precommit install | uninstall | run ID`` (initd/commands/precommit.py): install
and uninstall for people, ``run`` as the installed chain calls it: each hook in turn, the
first failure ending it with its output on stderr, an id the chain names that is no
pre-commit hook any more a usage error that says what to do. The chain under real
commits: tests/hooks/test_precommit.py."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.commands import precommit
from initd.errors import InitdError, UsageError
from initd.hooks.gitscripts import MARKER
from tests.hooks.support import add_hook, forget_session, git_repo


@pytest.fixture
def sid() -> Iterator[str]:
    made = f"pc-{uuid.uuid4().hex[:8]}"
    yield made
    forget_session(made)


def args(ws: Path, sid: str, *more: str) -> list[str]:
    return [*more, "--workspace", str(ws), "--session-id", sid,
            "--hooks-dir", str(ws / "no-image")]


def test_install_and_uninstall(tmp_path: Path, sid: str,
                               capsys: pytest.CaptureFixture[str]) -> None:
    ws = git_repo(tmp_path / "ws")
    add_hook(ws / ".discobot" / "hooks", "10-lint.sh", "exit 0", type="pre-commit")
    assert precommit.main(["install", *args(ws, sid)]) == 0
    chain = (ws / ".git" / "hooks" / "pre-commit").read_text()
    assert MARKER in chain and "10-lint.sh" in chain
    assert precommit.main(["uninstall", *args(ws, sid)]) == 0
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert "removed initd's pre-commit chain" in capsys.readouterr().out
    with pytest.raises(InitdError, match="is not the top of a git repository"):
        precommit.main(["install", *args(tmp_path, sid)])


def test_run_stops_at_the_first_failure(tmp_path: Path, sid: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    ws = git_repo(tmp_path / "ws")
    hooks = ws / ".discobot" / "hooks"
    add_hook(hooks, "10-ok.sh", "echo ok >> ran", type="pre-commit")
    add_hook(hooks, "20-bad.sh", "echo lint says no; exit 4", type="pre-commit")
    add_hook(hooks, "30-never.sh", "echo never >> ran", type="pre-commit")
    code = precommit.main(["run", *args(ws, sid), "10-ok", "20-bad", "30-never"])
    assert code == 4 and (ws / "ran").read_text() == "ok\n"
    err = capsys.readouterr().err
    assert "lint says no" in err and "pre-commit hook '20-bad.sh' failed with exit code 4" \
        in err


def test_run_of_an_id_that_is_no_pre_commit_hook(tmp_path: Path, sid: str) -> None:
    ws = git_repo(tmp_path / "ws")
    add_hook(ws / ".discobot" / "hooks", "10-file.sh", "exit 0", type="file", pattern="*")
    with pytest.raises(UsageError, match=r"no pre-commit hook '10-file', 'gone'.*initd "
                       "precommit install"):
        precommit.main(["run", *args(ws, sid), "10-file", "gone"])
    assert os.path.isdir(ws)
