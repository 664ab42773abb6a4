"""discover()/load(): every file of the hook directories becomes a Hook or a one-line Problem.

Real files in tmp_path, real permission bits, real symlinks and FIFOs. The property that
matters most: one bad file never hides the other hooks and never raises.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from initd.config import paths
from initd.config.problems import ERROR, NOTE, Problem
from initd.hooks import discovery
from initd.hooks.discovery import Found
from initd.hooks.model import Hook

MB = 1024 * 1024


def hook_text(name: str = "lint", extra: str = "") -> str:
    return f"#!/bin/sh\n#---\n# name: {name}\n# type: session\n{extra}#---\necho {name}\n"


def write(path: Path, content: str | bytes, mode: int = 0o755) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    path.chmod(mode)
    return path


def load(path: Path) -> Hook | Problem:
    return discovery.load(str(path), str(path.parent))


def problem(path: Path, severity: str) -> Problem:
    """load(path), which must be a Problem of that severity whose str() names the file."""
    found = load(path)
    assert isinstance(found, Problem), found
    assert found.severity == severity, found
    assert found.path == str(path)
    assert str(found).startswith(f"{path}: ")
    return found


@pytest.fixture
def hooks(tmp_path: Path) -> Path:
    directory = tmp_path / "hooks"
    directory.mkdir()
    return directory


def test_valid_session_hook(hooks: Path) -> None:
    """The plain case: shebang, #--- block, exec bit -> one Hook, no problems."""
    path = write(hooks / "lint.sh", hook_text())
    found = discovery.discover([str(hooks)])
    assert found == Found(hooks=(Hook(id="lint", name="lint", type="session", path=str(path),
                                      directory=str(hooks)),), problems=())
    assert found.errors == ()


@pytest.mark.parametrize("text", [
    pytest.param("#!/bin/sh\n---\nname: lint\ntype: session\n---\necho hi\n", id="dashes"),
    pytest.param("#!/usr/bin/env node\n//---\n// name: lint\n// type: session\n//---\n",
                 id="slashes"),
    pytest.param("#!/bin/sh\r\n#---\r\n# name: lint\r\n# type: session\r\n#---\r\n", id="crlf"),
])
def test_each_style_loads(hooks: Path, text: str) -> None:
    """All delimiter styles and CRLF files load as hooks, not just #---."""
    found = load(write(hooks / "lint.sh", text))
    assert isinstance(found, Hook)
    assert (found.name, found.type) == ("lint", "session")


def test_not_executable_is_an_error_mentioning_chmod(hooks: Path) -> None:
    """A hook missing its exec bit is a broken hook whose message gives the fix."""
    path = write(hooks / "lint.sh", hook_text(), mode=0o644)
    found = problem(path, ERROR)
    assert f"chmod +x {path}" in found.reason
    assert "hook 'lint'" in found.reason


def test_exec_bit_without_shebang_is_an_error(hooks: Path) -> None:
    """Front matter without a shebang cannot be executed: an error, not a silent skip."""
    path = write(hooks / "lint.sh", "#---\n# name: lint\n# type: session\n#---\necho hi\n")
    found = problem(path, ERROR)
    assert "no shebang" in found.reason
    assert "hook 'lint'" in found.reason


def test_bom_before_shebang_is_an_error(hooks: Path) -> None:
    """The kernel will not exec '\\ufeff#!': such a file must not pass as a hook."""
    path = write(hooks / "lint.sh", "\ufeff" + hook_text())
    assert "no shebang" in problem(path, ERROR).reason


def test_readme_is_a_note(hooks: Path) -> None:
    """A README (no front matter) is not a hook: a note, not an error."""
    path = write(hooks / "README.md", "# Hooks\n\nPut hooks here.\n", mode=0o644)
    assert "no front matter" in problem(path, NOTE).reason


def test_executable_without_front_matter_is_a_note(hooks: Path) -> None:
    """An ordinary script (shebang, exec bit, no block) is a note."""
    path = write(hooks / "helper.sh", "#!/bin/sh\necho helper\n")
    assert "no front matter" in problem(path, NOTE).reason


def test_directory_is_a_note(hooks: Path) -> None:
    """A sub-directory (even an executable one) is not a hook."""
    sub = hooks / "lib.sh"
    sub.mkdir()
    assert problem(sub, NOTE).reason == "not a regular file"


def test_fifo_is_a_note_without_blocking(hooks: Path) -> None:
    """A FIFO is never opened (opening it would hang discovery): a note."""
    fifo = hooks / "pipe.sh"
    os.mkfifo(fifo)
    assert problem(fifo, NOTE).reason == "not a regular file"


def test_symlink_to_a_valid_hook_is_a_hook(tmp_path: Path, hooks: Path) -> None:
    """A linked hook is a hook, known by the link's path and name."""
    target = write(tmp_path / "elsewhere" / "real.sh", hook_text())
    link = hooks / "linked.sh"
    link.symlink_to(target)
    found = load(link)
    assert isinstance(found, Hook)
    assert (found.id, found.path, found.name) == ("linked", str(link), "lint")


def test_symlink_to_a_directory_is_a_note(tmp_path: Path, hooks: Path) -> None:
    """A link to a directory is followed, and a directory is not a hook."""
    (tmp_path / "adir").mkdir()
    link = hooks / "adir.sh"
    link.symlink_to(tmp_path / "adir")
    assert problem(link, NOTE).reason == "not a regular file"


def test_symlink_loop_is_an_error_not_an_exception(hooks: Path) -> None:
    """ELOOP is reported per file, and the other hooks are still found."""
    (hooks / "a.sh").symlink_to(hooks / "b.sh")
    (hooks / "b.sh").symlink_to(hooks / "a.sh")
    (hooks / "self.sh").symlink_to(hooks / "self.sh")
    write(hooks / "lint.sh", hook_text())
    found = discovery.discover([str(hooks)])
    assert [h.id for h in found.hooks] == ["lint"]
    assert [p.path for p in found.problems] == [str(hooks / n) for n in ("a.sh", "b.sh",
                                                                         "self.sh")]
    for p in found.problems:
        assert p.severity == ERROR
        assert "cannot read" in p.reason


def test_dangling_symlink_is_an_error(hooks: Path) -> None:
    """A link to nowhere is a broken hook, reported with the OS's reason."""
    link = hooks / "gone.sh"
    link.symlink_to(hooks / "does-not-exist.sh")
    found = problem(link, ERROR)
    assert "cannot read" in found.reason
    assert os.strerror(2) in found.reason  # ENOENT


def _can_read(path: Path) -> bool:
    try:
        with path.open("rb"):
            return True
    except PermissionError:
        return False


def test_mode_000_file_does_not_crash(hooks: Path) -> None:
    """chmod 000: an error either way - unreadable, or (as root, who can read it) not executable."""
    path = write(hooks / "lint.sh", hook_text(), mode=0o000)
    found = problem(path, ERROR)
    if _can_read(path):  # root (CAP_DAC_OVERRIDE) reads anything
        assert "not executable" in found.reason
    else:
        assert "cannot read" in found.reason


def test_execute_only_file(hooks: Path) -> None:
    """chmod 111: a hook if this process can read it (root), else a 'cannot read' error."""
    path = write(hooks / "lint.sh", hook_text(), mode=0o111)
    found = load(path)
    if _can_read(path):
        assert isinstance(found, Hook)
    else:
        assert isinstance(found, Problem)
        assert (found.severity, "cannot read" in found.reason) == (ERROR, True)


def test_huge_file_whose_front_matter_never_closes(hooks: Path) -> None:
    """Only the first 64 KiB is read; an unclosed block says so instead of reading 10 MB."""
    path = hooks / "big.sh"
    with path.open("w") as f:
        f.write("#!/bin/sh\n---\nname: big\ntype: session\n")
        f.write("# still front matter\n" * (10 * MB // 21))
    path.chmod(0o755)
    assert path.stat().st_size >= 10 * MB - 100
    found = problem(path, ERROR)
    assert "never closed" in found.reason
    assert "64 KiB" in found.reason


def test_front_matter_closing_just_past_64_kib(hooks: Path) -> None:
    """A block that closes after the first 64 KiB is an error naming the limit."""
    padding = "# padding\n" * (70 * 1024 // 10)
    path = write(hooks / "late.sh", f"#!/bin/sh\n---\ntype: session\n{padding}---\necho\n")
    found = problem(path, ERROR)
    assert "never closed" in found.reason
    assert found.reason.endswith("(only a file's first 64 KiB are read for it)")


def test_small_unclosed_file_does_not_blame_the_limit(hooks: Path) -> None:
    """The 64 KiB hint appears only when the limit was actually reached."""
    path = write(hooks / "small.sh", "#!/bin/sh\n---\nname: small\n")
    found = problem(path, ERROR)
    assert "never closed" in found.reason
    assert "64 KiB" not in found.reason


def test_huge_file_with_valid_front_matter_is_a_hook(hooks: Path) -> None:
    """A 10 MB hook with its block at the top loads; the body is never parsed."""
    path = hooks / "big.sh"
    with path.open("w") as f:
        f.write(hook_text("big"))
        f.write("echo 'a body line that goes on and on'\n" * (10 * MB // 39))
    path.chmod(0o755)
    assert path.stat().st_size >= 10 * MB - 100
    found = load(path)
    assert isinstance(found, Hook)
    assert found.name == "big"


GARBAGE = random.Random(20240501).randbytes(64 * 1024)


def test_binary_garbage_is_a_note(hooks: Path) -> None:
    """An executable binary (ELF-ish bytes) has no front matter: a note, no decode crash."""
    path = write(hooks / "tool", b"\x7fELF\x02\x01\x01\x00" + GARBAGE)
    assert "no front matter" in problem(path, NOTE).reason


def test_binary_garbage_inside_front_matter_is_an_error(hooks: Path) -> None:
    """Undecodable bytes and NULs inside a block are broken front matter, not a crash."""
    path = write(hooks / "mangled.sh", b"#!/bin/sh\n---\n" + GARBAGE[:4096] + b"\n---\n")
    assert "front matter" in problem(path, ERROR).reason


def test_bad_run_as_names_file_key_and_hook(hooks: Path) -> None:
    """`run_as: Root` is an error (never root) that names the file, the key and the hook."""
    path = write(hooks / "deploy.sh", hook_text("Deploy", extra="# run_as: Root\n"))
    found = problem(path, ERROR)
    text = str(found)
    for fragment in (str(path), "hook 'Deploy'", "run_as", "exactly 'root' or 'user'", "'Root'"):
        assert fragment in text


def test_broken_yaml_is_an_error(hooks: Path) -> None:
    """Invalid YAML in a hook is an error that says so."""
    path = write(hooks / "quote.sh", '#!/bin/sh\n---\nname: "\n---\n')
    assert "front matter: invalid YAML" in problem(path, ERROR).reason


def test_duplicate_id_in_one_directory(hooks: Path) -> None:
    """Two files with one id (lint.py, lint.sh): the first by name wins, the second errs."""
    first = write(hooks / "lint.py", hook_text("py"))
    second = write(hooks / "lint.sh", hook_text("sh"))
    found = discovery.discover([str(hooks)])
    assert [(h.id, h.path) for h in found.hooks] == [("lint", str(first))]
    assert len(found.problems) == 1
    dup = found.problems[0]
    assert (dup.path, dup.severity) == (str(second), ERROR)
    assert "'lint'" in dup.reason
    assert str(first) in dup.reason


def test_duplicate_id_across_directories(tmp_path: Path) -> None:
    """A workspace hook cannot take over an image hook's id: the workspace one errs."""
    image, workspace = tmp_path / "image", tmp_path / "ws"
    write(image / "fmt.sh", hook_text("image fmt"))
    write(workspace / "Fmt.bash", hook_text("workspace fmt"))
    found = discovery.discover([str(image), str(workspace)])
    assert [h.name for h in found.hooks] == ["image fmt"]
    assert [(p.path, p.severity) for p in found.problems] == [(str(workspace / "Fmt.bash"),
                                                                ERROR)]
    assert found.errors == found.problems


def test_broken_file_does_not_reserve_its_id(hooks: Path) -> None:
    """Only loaded hooks claim an id: a broken lint.py does not block a good lint.sh."""
    write(hooks / "lint.py", hook_text("py"), mode=0o644)
    good = write(hooks / "lint.sh", hook_text("sh"))
    found = discovery.discover([str(hooks)])
    assert [h.path for h in found.hooks] == [str(good)]
    assert [p.path for p in found.problems] == [str(hooks / "lint.py")]


def test_order_directories_then_file_names(tmp_path: Path) -> None:
    """Image hooks come before workspace hooks; within a directory, file-name order."""
    image, workspace = tmp_path / "etc-initd-hooks.d", paths.workspace_hooks(str(tmp_path))
    for name in ("20-b.sh", "10-a.sh", "30-c.sh"):
        write(image / name, hook_text(f"image {name}"))
    for name in ("b.sh", "a.sh", "C.sh"):
        write(Path(workspace) / name, hook_text(f"ws {name}"))
    found = discovery.discover([str(image), workspace])
    assert [h.id for h in found.hooks] == ["10-a", "20-b", "30-c", "c", "a", "b"]  # C.sh < a.sh
    assert [h.directory for h in found.hooks] == [str(image)] * 3 + [workspace] * 3
    reverse = discovery.discover([workspace, str(image)])
    assert [h.id for h in reverse.hooks] == ["c", "a", "b", "10-a", "20-b", "30-c"]


def test_problems_are_in_discovery_order(tmp_path: Path) -> None:
    """Problems are listed in the same directory-then-name order as hooks."""
    one, two = tmp_path / "one", tmp_path / "two"
    write(one / "z.txt", "notes\n", mode=0o644)
    write(one / "a.txt", "notes\n", mode=0o644)
    write(two / "m.txt", "notes\n", mode=0o644)
    found = discovery.discover([str(one), str(two)])
    assert [p.path for p in found.problems] == [str(one / "a.txt"), str(one / "z.txt"),
                                                str(two / "m.txt")]
    assert found.errors == ()  # notes only


def test_hidden_files_are_never_hooks_but_each_gets_a_note(hooks: Path) -> None:
    """Dot files (.gitkeep, swap files, even a valid hidden hook) are skipped, each with a
    note saying why (issue 3: every skipped file is one line)."""
    write(hooks / ".gitkeep", "", mode=0o644)
    write(hooks / ".lint.sh.swp", b"\x00\x01garbage")
    write(hooks / ".hidden.sh", hook_text("hidden"))
    (hooks / ".dangling").symlink_to(hooks / "nowhere")
    write(hooks / "lint.sh", hook_text())
    found = discovery.discover([str(hooks)])
    assert [h.id for h in found.hooks] == ["lint"]
    assert sorted(p.path for p in found.problems) == sorted(
        str(hooks / name) for name in (".gitkeep", ".lint.sh.swp", ".hidden.sh", ".dangling"))
    assert {(p.severity, p.reason) for p in found.problems} == {
        ("note", "hidden file: never a hook")}


def test_missing_directory_is_ignored(tmp_path: Path, hooks: Path) -> None:
    """A workspace without .discobot/hooks is normal: no hooks, no problems."""
    write(hooks / "lint.sh", hook_text())
    found = discovery.discover([str(tmp_path / "absent"), str(hooks),
                                paths.workspace_hooks(str(tmp_path / "ws"))])
    assert [h.id for h in found.hooks] == ["lint"]
    assert found.problems == ()
    assert discovery.discover([]) == Found((), ())


def test_directory_that_is_a_file_is_an_error(tmp_path: Path, hooks: Path) -> None:
    """A hook 'directory' that is a regular file is reported, and other dirs still load."""
    not_a_dir = write(tmp_path / "hooks.d", "oops\n", mode=0o644)
    write(hooks / "lint.sh", hook_text())
    found = discovery.discover([str(not_a_dir), str(hooks)])
    assert [h.id for h in found.hooks] == ["lint"]
    assert [(p.path, p.severity) for p in found.problems] == [(str(not_a_dir), ERROR)]
    assert "cannot list the directory" in found.problems[0].reason


def test_everything_at_once(tmp_path: Path, hooks: Path) -> None:
    """A messy directory: every good hook is found and every bad file gets exactly one line."""
    write(hooks / "a-good.sh", hook_text("a"))
    write(hooks / "b-noexec.sh", hook_text("b"), mode=0o644)
    write(hooks / "c-readme.md", "hello\n", mode=0o644)
    (hooks / "d-dir").mkdir()
    (hooks / "e-dangling.sh").symlink_to(tmp_path / "nothing")
    write(hooks / "f-root.sh", hook_text("f", extra="# run_as: admin\n"))
    write(hooks / "g-good.py", hook_text("g"))
    found = discovery.discover([str(hooks)])
    assert [h.name for h in found.hooks] == ["a", "g"]
    assert [(Path(p.path).name, p.severity) for p in found.problems] == [
        ("b-noexec.sh", ERROR), ("c-readme.md", NOTE), ("d-dir", NOTE),
        ("e-dangling.sh", ERROR), ("f-root.sh", ERROR)]
    assert [Path(p.path).name for p in found.errors] == ["b-noexec.sh", "e-dangling.sh",
                                                         "f-root.sh"]


def test_problem_str_includes_the_path() -> None:
    """Problem lines read 'path: reason' so the user knows which file to fix."""
    p = Problem("/ws/.discobot/hooks/x.sh", None, "not executable", ERROR)
    assert str(p) == "/ws/.discobot/hooks/x.sh: not executable"


def test_workspace_hooks() -> None:
    """Workspace hooks live in <workspace>/.discobot/hooks."""
    assert paths.workspace_hooks("/home/u/proj") == "/home/u/proj/.discobot/hooks"


@pytest.mark.parametrize("extra", [
    pytest.param('# x: "\n', id="invalid-yaml"),
    pytest.param("# run_as: Root\n", id="bad-run-as"),
    pytest.param("# timeout: -1\n", id="bad-timeout"),
    pytest.param("# created: 2024-02-30\n", id="impossible-date"),
    pytest.param("# x: " + "[" * 5000 + "\n", id="deep-nesting"),
    pytest.param("# timeout: 1" + "0" * 400 + "\n", id="huge-timeout"),
])
def test_one_bad_file_never_stops_discovery(hooks: Path, extra: str) -> None:
    """Any broken front matter is one ERROR line; the other hooks are still discovered."""
    bad = write(hooks / "bad.sh", hook_text("bad", extra=extra))
    write(hooks / "good.sh", hook_text("good"))
    found = discovery.discover([str(hooks)])
    assert [h.name for h in found.hooks] == ["good"]
    assert [(p.path, p.severity) for p in found.problems] == [(str(bad), ERROR)]


# --- a directory with more names than hooks (the agent may fill the workspace's)


def test_an_overfull_directory_gives_its_first_names_in_order_and_says_the_rest(
        hooks: Path) -> None:
    names = [f"{n:05d}-x" for n in range(discovery.MAX_ENTRIES + 37)]
    for name in random.sample(names, len(names)):  # (the order listdir gives is not ours)
        (hooks / name).write_text("not a hook\n")
    first, more = discovery.listing(str(hooks))
    assert (first, more) == (sorted(names)[:discovery.MAX_ENTRIES], 37)
    found = discovery.discover([str(hooks)])
    [unread] = found.unread
    assert unread in found.problems and unread.severity == ERROR
    assert f"holds {discovery.MAX_ENTRIES + 37} entries" in unread.reason
    assert "only the first 1000 in name order" in unread.reason


def test_past_the_scan_limit_the_count_says_or_more(
        hooks: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discovery, "MAX_ENTRIES", 3)
    monkeypatch.setattr(discovery, "SCAN_LIMIT", 10)
    for n in range(25):
        (hooks / f"{n:02d}").write_text("x\n")
    first, more = discovery.listing(str(hooks))
    assert len(first) == 3 and more == 7  # 10 listed, 3 of them read
    [unread] = discovery.discover([str(hooks)]).unread
    assert "holds 10 or more entries" in unread.reason


@pytest.mark.slow
def test_a_directory_within_the_limit_is_read_whole(hooks: Path) -> None:
    for n in range(discovery.MAX_ENTRIES):
        (hooks / f"{n:04d}").write_text("x\n")
    assert discovery.listing(str(hooks))[1] == 0
    assert discovery.discover([str(hooks)]).unread == ()
