"""process/execfail.py: what a failed exec means, as sh says it. 127 when the command is
not found, 126 when it cannot be executed, each with one line (and a hint for the two
mistakes users make); a failure that is not the command's (its working directory,
/dev/null) is initd's own, 125. The errors are the kernel's own: each case is a real
exec that failed, through subprocess as spawn.py starts children."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from initd import VERBS
from initd.errors import InitdError
from initd.process import spawn
from initd.process.execfail import ExecFailed, exec_failure
from initd.process.spec import Spec


def failure(argv: tuple[str, ...], cwd: str) -> InitdError:
    """What exec_failure makes of the OSError a real start of ``argv`` in ``cwd`` gave."""
    spec = Spec(argv=argv, env={"PATH": "/usr/bin:/bin"}, cwd=cwd)
    try:
        subprocess.Popen(argv, env=dict(spec.env), cwd=cwd, process_group=0).wait()
    except OSError as err:
        return exec_failure(spec, err)
    raise AssertionError(f"{argv} started")


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "script").write_text("#!/bin/sh\necho hi\n")  # not executable
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x7fELF but not really\x00\x01")
    garbage.chmod(0o755)
    (tmp_path / "plain").write_text("")
    (tmp_path / "adir").mkdir()
    return tmp_path


@pytest.mark.parametrize(("name", "code", "said"), [
    ("no-such-program-xyz", 127, "no-such-program-xyz: No such file or directory"),
    ("./missing", 127, "./missing: No such file or directory"),
    ("./plain/below", 127, "./plain/below: No such file or directory"),  # ENOTDIR
    ("./script", 126, "./script: Permission denied"),
    ("./garbage", 126, "./garbage: Exec format error"),
    ("./adir", 126, "./adir: Is a directory"),  # (relative to the command's cwd)
    ("adir", 127, "adir: No such file or directory"),  # no slash: looked up in PATH
])
def test_not_found_is_127_and_not_executable_is_126(files: Path, name: str, code: int,
                                                    said: str) -> None:
    err = failure((name,), str(files))
    assert isinstance(err, ExecFailed)
    assert (err.exit_code, str(err)) == (code, said)


def test_a_directory_named_with_its_path_is_a_directory_wherever_initd_runs(
        files: Path) -> None:
    """``initd /tmp`` from /tmp: the exec's EACCES is the command's, not the cwd's."""
    err = failure((str(files),), str(files))
    assert isinstance(err, ExecFailed)
    assert (err.exit_code, str(err)) == (126, f"{files}: Is a directory")


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_a_verb_after_the_double_dash_is_not_found_with_a_hint(verb: str, files: Path) -> None:
    err = failure((verb,), str(files))
    assert isinstance(err, ExecFailed) and err.exit_code == 127
    assert str(err) == (f"{verb}: No such file or directory (hint: initd's verbs come first, "
                        f"before any option: initd {verb} …; a program called {verb} needs "
                        "its path)")


def test_an_option_taken_for_the_command_gets_the_entrypoint_hint(files: Path) -> None:
    err = failure(("--version",), str(files))
    assert isinstance(err, ExecFailed) and err.exit_code == 127
    assert str(err).startswith("--version: No such file or directory (hint: everything "
                               "after -- is CMD;")
    assert "podman run --entrypoint initd IMAGE --version" in str(err)


def test_no_working_directory_is_initds_own_error(tmp_path: Path) -> None:
    gone = str(tmp_path / "gone")
    err = failure(("true",), gone)
    assert not isinstance(err, ExecFailed) and err.exit_code == 125
    assert str(err) == f"cannot enter working directory {gone}: No such file or directory"


def test_a_working_directory_that_is_a_file_is_initds_own_error(files: Path) -> None:
    err = failure(("true",), str(files / "plain"))
    assert not isinstance(err, ExecFailed) and err.exit_code == 125
    assert str(err) == f"cannot enter working directory {files / 'plain'}: Not a directory"


def test_any_other_failure_of_the_exec_is_initds_own_error(files: Path) -> None:
    """E2BIG: an argument past the kernel's MAX_ARG_STRLEN (128 KiB)."""
    err = failure(("true", "x" * 200_000), str(files))
    assert not isinstance(err, ExecFailed) and err.exit_code == 125
    assert str(err) == "cannot start true: Argument list too long"


def test_spawn_raises_what_exec_failure_says(files: Path) -> None:
    with pytest.raises(ExecFailed) as failed:
        spawn.spawn(Spec(argv=("./script",), env={}, cwd=str(files)))
    assert (failed.value.exit_code, str(failed.value)) == (126, "./script: Permission denied")


DEVNULL_GONE = """
import sys
from initd.errors import InitdError
from initd.process import spawn
try:
    spawn.spawn(spawn.Spec(argv=("true",), env={"PATH": "/usr/bin:/bin"}, cwd="/"))
except InitdError as err:
    print(type(err).__name__, err.exit_code, err)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="a mount namespace of its own needs root")
def test_a_failure_that_is_not_the_commands_is_initds_own(tmp_path: Path) -> None:
    """/dev/null, which a child's stdin is, made read-only in a mount namespace of the
    test's own: the start fails on it, and that is not ``true``'s fault."""
    (tmp_path / "nothing").write_text("")
    out = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         'mount --bind "$1" /dev/null && mount -o remount,bind,ro /dev/null && '
         'exec "$2" -c "$3"', "sh", str(tmp_path / "nothing"),
         sys.executable, DEVNULL_GONE], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "InitdError 125 cannot start true: /dev/null: Read-only file system\n"
