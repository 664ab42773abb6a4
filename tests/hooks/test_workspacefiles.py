"""The hook files as a person's verb reads them (initd/hooks/workspacefiles.py): under a
guard, through agentfs (no link followed, the tree owner's files only, or root's with one
name), each refusal named once; outside it, as read at boot; a hook that is a link
resolved by initd to a file of the workspace, never by the kernel; a directory's names
bounded in memory and time. The attacks: tests/security/test_linked_hooks.py and
tests/security/test_hooks_dir_overflow.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from initd.hooks import workspacefiles as wf
from initd.state.agentfs import Unsafe

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0,
                               reason="cannot run here: files of another user need root")


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Path]:
    made = tmp_path / "ws"
    (made / ".claude").mkdir(parents=True)
    (made / ".claude" / "settings.json").write_text("{}")
    (tmp_path / "secret").write_text("root's")
    yield made
    wf.refusals()


def test_outside_a_guard_a_file_is_read_where_its_path_leads(ws: Path) -> None:
    (ws / "link.json").symlink_to(ws.parent / "secret")
    assert wf.read(str(ws / "link.json"), 100)[0] == b"root's"
    with pytest.raises(Unsafe):
        wf.read(str(ws / "link.json"), 100, follow=False)
    assert not wf.guarded(str(ws / "link.json"))


def test_under_a_guard_no_link_is_followed_and_each_refusal_is_named_once(ws: Path) -> None:
    (ws / ".claude" / "settings.local.json").symlink_to(ws.parent / "secret")
    (ws / "dir").symlink_to(ws / ".claude")
    with wf.guard(wf.tree(str(ws))):
        assert wf.read(str(ws / ".claude" / "settings.json"), 100)[0] == b"{}"
        for path in (ws / ".claude" / "settings.local.json", ws / "dir" / "settings.json"):
            with pytest.raises(wf.Refused) as raised:
                wf.read(str(path), 100)
            assert "root's" not in str(raised.value)
        with pytest.raises(wf.Refused):  # again: named once
            wf.read(str(ws / ".claude" / "settings.local.json"), 100)
        with pytest.raises(FileNotFoundError):
            wf.read(str(ws / "none.json"), 100)
        refused = wf.refusals()
        assert len(refused) == 2 and "a symbolic link: not read" in refused[0]
        assert wf.refusals() == []
    assert not wf.guarded(str(ws / ".claude" / "settings.json"))  # the guard is over


@ROOT_ONLY
def test_under_a_guard_only_the_owners_files_or_roots_with_one_name(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.chown(ws, 65534, 65534)
    theirs, roots, linked = ws / "theirs.json", ws / "roots.json", ws / "linked.json"
    for path in (theirs, roots):
        path.write_text("{}")
    os.chown(theirs, 65534, 65534)
    (tmp_path / "shadow").write_text("secret")
    os.link(tmp_path / "shadow", linked)  # a hard link to a root file
    with wf.guard(wf.tree(str(ws))):
        assert wf.read(str(theirs), 10)[0] == b"{}"
        assert wf.read(str(roots), 10)[0] == b"{}"  # root's, one name: cloned as root
        with pytest.raises(wf.Refused, match="has 2 names"):
            wf.read(str(linked), 10)
    wf.refusals()


def test_a_hook_that_is_a_link_to_a_file_of_the_workspace(ws: Path) -> None:
    hooks = ws / ".discobot" / "hooks"
    hooks.mkdir(parents=True)
    (ws / "scripts").mkdir()
    (ws / "scripts" / "lint.sh").write_text("#!/bin/sh\n")
    (hooks / "10-lint.sh").symlink_to("../../scripts/lint.sh")
    head, _, runs = wf.read_hook(str(hooks / "10-lint.sh"), 100, str(ws))
    assert head == b"#!/bin/sh\n" and runs == str(ws / "scripts" / "lint.sh")
    (hooks / "20-out.sh").symlink_to(ws.parent / "secret")
    with pytest.raises(wf.Linked, match="outside the workspace: not followed"):
        wf.read_hook(str(hooks / "20-out.sh"), 100, str(ws))
    (hooks / "30-dangling.sh").symlink_to("../../nope.sh")
    with pytest.raises(wf.Linked, match="does not exist"):
        wf.read_hook(str(hooks / "30-dangling.sh"), 100, str(ws))
    (ws / "scripts" / "hop.sh").symlink_to("lint.sh")
    (hooks / "40-twice.sh").symlink_to("../../scripts/hop.sh")
    with pytest.raises(wf.Linked, match="a link itself"):
        wf.read_hook(str(hooks / "40-twice.sh"), 100, str(ws))
    plain = hooks / "50-plain.sh"
    plain.write_text("#!/bin/sh\nexit 0\n")
    assert wf.read_hook(str(plain), 100, str(ws))[2] == str(plain)


def test_names_bounded_in_memory_and_time(tmp_path: Path) -> None:
    for name in ("d", "a", "c", "b", "e"):
        (tmp_path / name).write_text("")
    assert wf.names(str(tmp_path), 3, 100) == (["a", "b", "c"], 2)
    assert wf.names(str(tmp_path), 10, 100) == (["a", "b", "c", "d", "e"], 0)
    first, more = wf.names(str(tmp_path), 10, 2)  # only two listed
    assert len(first) == 2 and more == 0
