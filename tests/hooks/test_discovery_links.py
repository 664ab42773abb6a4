"""A workspace's hooks directory as discovery reads it (issue 36): a symbolic link is a
hook only when it names a regular file of the workspace with no other link on the way
(resolved by initd, never followed by the kernel), and runs as that file; every other
link is an ERROR that stands in for the guard it would have been; a ``run_as: root``
hook is never a link nor over root's copy limit; a hook is judged as its runner runs it.

Real files, real links, real permission bits, in tmp_path.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from initd.config import paths
from initd.config.problems import ERROR, NOTE, Problem
from initd.hooks import discovery
from initd.hooks.model import Hook


def hook_text(kind: str = "pre_tool", extra: str = "") -> str:
    return f"#!/bin/sh\n#---\n# name: guard\n# type: {kind}\n{extra}#---\nexit 2\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    Path(paths.workspace_hooks(str(tmp_path))).mkdir(parents=True)
    return tmp_path


def hooks(ws: Path) -> Path:
    return Path(paths.workspace_hooks(str(ws)))


def script(path: Path, text: str | None = None, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(hook_text() if text is None else text)
    path.chmod(mode)
    return path


def only(ws: Path) -> Hook | Problem:
    """What discovery makes of the workspace's one file, 10-guard.sh."""
    found = discovery.for_workspace(str(ws), str(ws / "no-image"))
    found_all: list[Hook | Problem] = [*found.hooks, *found.problems]
    [one] = found_all
    return one


def test_a_link_to_a_file_of_the_workspace_is_that_files_hook(ws: Path) -> None:
    target = script(ws / "scripts" / "guard.sh")
    (hooks(ws) / "10-guard.sh").symlink_to("../../scripts/guard.sh")
    found = only(ws)
    assert isinstance(found, Hook)
    assert (found.id, found.path, found.type) == ("10-guard", str(target), "pre_tool")
    assert found.directory == str(hooks(ws))


def test_an_absolute_link_into_the_workspace_is_one_too(ws: Path) -> None:
    target = script(ws / "scripts" / "guard.sh")
    (hooks(ws) / "10-guard.sh").symlink_to(target)
    found = only(ws)
    assert isinstance(found, Hook) and found.path == str(target)


def to_a_link(ws: Path) -> str:
    script(ws / "real.sh")
    os.symlink("real.sh", ws / "link.sh")
    return "../../link.sh"


def through_a_link(ws: Path) -> str:
    script(ws / "scripts" / "g.sh")
    os.symlink("scripts", ws / "bin")
    return "../../bin/g.sh"


def outside(ws: Path) -> str:
    return str(script(ws.parent / f"{ws.name}-elsewhere.sh"))  # a good hook, elsewhere


LINKS: dict[str, tuple[Callable[[Path], str], str]] = {  # id: (makes it, what is said)
    "dangling": (lambda ws: "../../nowhere.sh", "which does not exist"),
    "loop": (lambda ws: "10-guard.sh", "a link itself"),
    "outside": (outside, "outside the workspace"),
    "etc": (lambda ws: "/etc/passwd", "outside the workspace"),
    "to-a-link": (to_a_link, "a link itself or has one on the way"),
    "link-on-the-way": (through_a_link, "a link itself or has one on the way"),
}


@pytest.mark.parametrize("kind", list(LINKS))
def test_any_other_link_is_an_error_that_stands_in(ws: Path, kind: str) -> None:
    make, said = LINKS[kind]
    link = hooks(ws) / "10-guard.sh"
    link.symlink_to(make(ws))
    found = discovery.for_workspace(str(ws), str(ws / "no-image"))
    assert found.hooks == ()
    [problem] = found.problems
    assert (problem.path, problem.severity) == (str(link), ERROR)
    assert problem.reason.startswith("a symbolic link to ") and said in problem.reason
    [broken] = found.broken
    assert broken.read is False  # not read: it may have been a guard (events: a stand-in)


def test_a_link_to_a_directory_is_not_a_hook(ws: Path) -> None:
    (ws / "lib").mkdir()
    (hooks(ws) / "10-guard.sh").symlink_to("../../lib")
    found = only(ws)
    assert isinstance(found, Problem) and found.severity == NOTE
    assert found.reason == "a symbolic link to '../../lib', not a regular file"


def test_front_matter_errors_of_a_linked_file_name_the_link(ws: Path) -> None:
    script(ws / "scripts" / "guard.sh", mode=0o644)
    (hooks(ws) / "10-guard.sh").symlink_to("../../scripts/guard.sh")
    found = only(ws)
    assert isinstance(found, Problem) and found.severity == ERROR
    assert found.path == str(hooks(ws) / "10-guard.sh") and "not executable" in found.reason


def test_a_root_hook_is_never_a_link(ws: Path) -> None:
    target = script(ws / "scripts" / "setup.sh", hook_text("session", "# run_as: root\n"))
    (hooks(ws) / "10-guard.sh").symlink_to("../../scripts/setup.sh")
    found = only(ws)
    assert isinstance(found, Problem) and found.severity == ERROR
    assert found.reason == (f"hook 'guard': run_as: root, and a symbolic link to {target}: "
                            "root runs only a file of the hooks directory itself, copied at "
                            "boot (copy it here)")


def test_a_root_hook_over_roots_copy_limit_is_an_error(ws: Path) -> None:
    path = script(hooks(ws) / "10-guard.sh", hook_text("session", "# run_as: root\n")
                  + "#" * discovery.ROOT_COPY_LIMIT + "\n")
    found = only(ws)
    assert isinstance(found, Problem) and found.severity == ERROR
    assert f"run_as: root, and {path.stat().st_size} bytes" in found.reason
    path.write_text(hook_text("session", "# run_as: root\n"))  # within it: a hook
    assert isinstance(only(ws), Hook)


@pytest.mark.parametrize(("mode", "owner", "runs"), [
    (0o755, "runner", True), (0o311, "runner", False), (0o645, "runner", False),
    (0o705, "other", True), (0o751, "other", False), (0o751, "group", True),
])
def test_a_hook_is_judged_as_its_runner_runs_it(ws: Path, mode: int, owner: str,
                                                 runs: bool) -> None:
    """(Each mode has an exec bit somewhere: "not executable" is another error.)"""
    path = script(hooks(ws) / "10-guard.sh", mode=mode)
    if os.geteuid() == 0:  # (root runs anything: the runner here is another user)
        os.chown(path, 4242, -1)
    info = path.stat()
    uid = info.st_uid if owner == "runner" else info.st_uid + 4242
    groups = [info.st_gid] if owner == "group" else [info.st_gid + 4242]
    with discovery.running_as(uid, groups):
        found = only(ws)
    assert isinstance(found, Hook) is runs, found
    if not runs:
        assert isinstance(found, Problem)
        assert f"uid {uid}, who runs it, may not read and execute it" in found.reason


def test_outside_the_workspace_directory_links_are_followed_as_before(tmp_path: Path) -> None:
    """The image's directory is root's own: its links are the image author's."""
    image = tmp_path / "image"
    target = script(tmp_path / "shared" / "guard.sh")
    image.mkdir()
    (image / "10-guard.sh").symlink_to(target)
    found = discovery.for_workspace(str(tmp_path / "ws"), str(image))
    assert [h.path for h in found.hooks] == [str(image / "10-guard.sh")]
