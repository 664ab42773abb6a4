"""Change detection (initd.hooks.changes) on real git repositories in tmp_path."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from initd.hooks import changes
from initd.process import git as initd_git
from tests.hooks.support import GIT_ENV

SEC = 1_000_000_000
MARKER = 1_700_000_000 * SEC  # an arbitrary fixed instant; files are dated around it

AWKWARD = [
    "with space.txt",
    'double"quote.txt',
    "single'quote.txt",
    "new\nline.txt",
    "$(touch CANARY).txt",
    "`touch CANARY`.txt",
    "ünïcödé ✓.txt",
    "日本語/ファイル.txt",
    "tab\there.txt",
    "-leading-dash.txt",
    "back\\slash.txt",
]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          env=GIT_ENV)
    return done.stdout.decode()


def init(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    git(path, "config", "user.email", "test@example.com")
    git(path, "config", "user.name", "Test")
    git(path, "config", "commit.gpgsign", "false")
    return path


def commit(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "commit")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = init(tmp_path / "ws")
    commit(path, {"a.txt": "a\n", "b.txt": "b\n", "d/c.txt": "c\n", ".gitignore": "*.log\n"})
    return path


def dirty(repo: Path) -> list[str]:
    return changes.dirty_files(str(repo))


def set_mtime(path: Path, ns: int) -> None:
    os.utime(path, ns=(ns, ns), follow_symlinks=False)


# dirty_files


def test_clean_repository_has_nothing_dirty(repo: Path) -> None:
    """Guards against committed, unchanged files being reported as changes."""
    assert dirty(repo) == []


def test_modified_tracked_file(repo: Path) -> None:
    """Guards against missing an unstaged edit of a tracked file."""
    (repo / "a.txt").write_text("changed\n")
    assert dirty(repo) == ["a.txt"]


def test_staged_only_change(repo: Path) -> None:
    """Guards against missing a change that is staged (index differs from HEAD)."""
    (repo / "b.txt").write_text("staged\n")
    git(repo, "add", "b.txt")
    assert dirty(repo) == ["b.txt"]


def test_staged_then_edited_again_is_listed_once(repo: Path) -> None:
    """Guards against a file with staged and unstaged changes appearing twice."""
    (repo / "b.txt").write_text("staged\n")
    git(repo, "add", "b.txt")
    (repo / "b.txt").write_text("and more\n")
    assert dirty(repo) == ["b.txt"]


def test_untracked_file(repo: Path) -> None:
    """Guards against new files the agent created going unnoticed."""
    (repo / "new.txt").write_text("n\n")
    (repo / "d" / "e").mkdir()
    (repo / "d" / "e" / "deep.txt").write_text("n\n")
    assert dirty(repo) == ["d/e/deep.txt", "new.txt"]


def test_ignored_file_is_excluded(repo: Path) -> None:
    """Guards against build output named in .gitignore triggering hooks."""
    (repo / "build.log").write_text("noise\n")
    (repo / "d" / "x.log").write_text("noise\n")
    (repo / "kept.txt").write_text("k\n")
    assert dirty(repo) == ["kept.txt"]


def test_nested_gitignore_and_info_exclude_are_honoured(repo: Path) -> None:
    """Guards against only the top-level .gitignore being applied (exclude-standard)."""
    commit(repo, {"d/.gitignore": "*.tmp\n"})
    (repo / ".git" / "info" / "exclude").write_text("secret.txt\n")
    (repo / "d" / "x.tmp").write_text("t\n")
    (repo / "secret.txt").write_text("s\n")
    (repo / "y.tmp").write_text("t\n")
    assert dirty(repo) == ["y.tmp"]


def test_deleted_tracked_file_is_included(repo: Path) -> None:
    """Guards against a deletion (worktree only, or staged with git rm) being skipped."""
    (repo / "a.txt").unlink()
    git(repo, "rm", "-q", "d/c.txt")
    assert dirty(repo) == ["a.txt", "d/c.txt"]


def test_staged_rename_shows_old_and_new_path(repo: Path) -> None:
    """Guards against rename detection hiding the old path of a git mv."""
    git(repo, "mv", "a.txt", "renamed.txt")
    assert dirty(repo) == ["a.txt", "renamed.txt"]


def test_unstaged_rename_shows_old_and_new_path(repo: Path) -> None:
    """Guards against a plain mv losing either side (a deletion plus an untracked file)."""
    (repo / "a.txt").rename(repo / "d" / "moved.txt")
    assert dirty(repo) == ["a.txt", "d/moved.txt"]


def test_repository_without_head(tmp_path: Path) -> None:
    """Guards against a fresh repository (no commit yet) reporting only untracked files."""
    repo = init(tmp_path / "fresh")
    (repo / "staged.txt").write_text("s\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "staged2.txt").write_text("s\n")
    git(repo, "add", "staged.txt", "sub/staged2.txt")
    (repo / "untracked.txt").write_text("u\n")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "ignored.log").write_text("i\n")
    assert dirty(repo) == [".gitignore", "staged.txt", "sub/staged2.txt", "untracked.txt"]


def test_empty_repository_without_head(tmp_path: Path) -> None:
    """Guards against an empty fresh repository raising instead of reporting nothing."""
    assert dirty(init(tmp_path / "empty")) == []


def test_awkward_names_are_returned_exactly(repo: Path, tmp_path: Path) -> None:
    """Guards against quoting, shell parsing or line splitting of file names (and injection)."""
    (repo / "日本語").mkdir()
    tracked = [name for i, name in enumerate(AWKWARD) if i % 2 == 0]
    for name in AWKWARD:
        (repo / name).write_text("x\n")
    git(repo, "add", "--", *tracked)
    git(repo, "commit", "-qm", "awkward")
    for name in tracked:
        (repo / name).write_text("modified\n")
    result = dirty(repo)
    assert result == sorted(AWKWARD)
    assert set(result) == set(AWKWARD)  # no quoting (\"…\", \\303…), no split newline name
    assert not list(tmp_path.rglob("CANARY"))
    assert not (Path.cwd() / "CANARY").exists()


def test_awkward_names_staged_and_deleted(repo: Path, tmp_path: Path) -> None:
    """Guards against awkward names being mangled on the staged and deleted paths too."""
    (repo / "日本語").mkdir()
    for name in AWKWARD:
        (repo / name).write_text("x\n")
    git(repo, "add", "--", *AWKWARD)
    git(repo, "commit", "-qm", "awkward")
    for name in AWKWARD[::2]:
        (repo / name).unlink()
    for name in AWKWARD[1::2]:
        (repo / name).write_text("staged\n")
    git(repo, "add", "-A")
    assert dirty(repo) == sorted(AWKWARD)
    assert not list(tmp_path.rglob("CANARY"))


def test_awkward_names_without_head(tmp_path: Path) -> None:
    """Guards against the no-HEAD (ls-files --cached) branch mangling names."""
    repo = init(tmp_path / "fresh")
    (repo / "日本語").mkdir()
    for name in AWKWARD:
        (repo / name).write_text("x\n")
    git(repo, "add", "--", *AWKWARD[:5])
    assert dirty(repo) == sorted(AWKWARD)
    assert not list(tmp_path.rglob("CANARY"))


def test_output_is_sorted(repo: Path) -> None:
    """Guards against tracked and untracked results being concatenated unsorted."""
    for name in ["z.txt", "B.txt", "m/a.txt", "_.txt"]:
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text("u\n")
    (repo / "b.txt").write_text("changed\n")
    (repo / "a.txt").unlink()
    result = dirty(repo)
    assert result == sorted(result)
    assert result == ["B.txt", "_.txt", "a.txt", "b.txt", "m/a.txt", "z.txt"]


def test_ignores_the_callers_git_environment(repo: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards against GIT_DIR/GIT_INDEX_FILE (set inside git hooks) pointing at another repo."""
    other = init(tmp_path / "other")
    commit(other, {"other.txt": "o\n"})
    (repo / "a.txt").write_text("changed\n")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert dirty(repo) == ["a.txt"]


def test_not_a_repository_is_a_clear_error(tmp_path: Path) -> None:
    """Guards against a non-repository silently reporting no changes."""
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("a\n")
    inside = subprocess.run(["git", "-C", str(plain), "rev-parse"], capture_output=True,
                            env=GIT_ENV).returncode == 0
    if inside:
        pytest.skip("cannot run here: tmp_path lies inside a git repository")
    with pytest.raises(changes.NotARepository, match="run git init there"):
        changes.dirty_files(str(plain))


def test_missing_directory_raises_oserror(tmp_path: Path) -> None:
    """Guards against a workspace that does not exist being taken as clean."""
    with pytest.raises(OSError):
        changes.dirty_files(str(tmp_path / "nope"))


def test_workspace_below_the_repository_root(repo: Path) -> None:
    """Guards against mixing root-relative and workspace-relative paths in a subdirectory."""
    (repo / "d" / "c.txt").write_text("changed\n")
    (repo / "d" / "new.txt").write_text("n\n")
    (repo / "a.txt").write_text("changed outside the workspace\n")
    assert changes.dirty_files(str(repo / "d")) == ["c.txt", "new.txt"]


# changed_since


def test_modified_after_the_marker_is_included(repo: Path) -> None:
    """Guards against missing a file edited since the last evaluation."""
    (repo / "a.txt").write_text("x\n")
    set_mtime(repo / "a.txt", MARKER + SEC)
    assert changes.changed_since(str(repo), MARKER, ["a.txt"]) == ["a.txt"]


def test_modified_before_the_marker_is_excluded(repo: Path) -> None:
    """Guards against re-running hooks for files already evaluated last time."""
    set_mtime(repo / "a.txt", MARKER - SEC)
    set_mtime(repo / "b.txt", MARKER - 1)
    assert changes.changed_since(str(repo), MARKER, ["a.txt", "b.txt"]) == []


def test_equal_mtime_is_included(repo: Path) -> None:
    """Guards against losing an edit within the file system clock's granularity (>=, not >)."""
    set_mtime(repo / "a.txt", MARKER)
    assert changes.changed_since(str(repo), MARKER, ["a.txt"]) == ["a.txt"]


def test_mixed_keeps_the_order_of_dirty(repo: Path) -> None:
    """Guards against changed_since reordering or dropping the newer files of a mixed set."""
    for name, ns in [("a.txt", MARKER + 5), ("b.txt", MARKER - 5), ("d/c.txt", MARKER)]:
        set_mtime(repo / name, ns)
    got = changes.changed_since(str(repo), MARKER, ["d/c.txt", "b.txt", "a.txt"])
    assert got == ["d/c.txt", "a.txt"]


def test_deleted_file_counts_when_its_directory_changed_after(repo: Path) -> None:
    """Guards against a deletion since the marker never triggering a hook."""
    (repo / "d" / "c.txt").unlink()
    set_mtime(repo / "d", MARKER + SEC)
    assert changes.changed_since(str(repo), MARKER, ["d/c.txt"]) == ["d/c.txt"]


def test_deleted_file_counts_when_its_directory_changed_at_the_marker(repo: Path) -> None:
    """Guards against >= being applied to files but not to a deleted file's directory."""
    (repo / "d" / "c.txt").unlink()
    set_mtime(repo / "d", MARKER)
    assert changes.changed_since(str(repo), MARKER, ["d/c.txt"]) == ["d/c.txt"]


def test_deleted_file_does_not_count_when_its_directory_is_older(repo: Path) -> None:
    """Guards against an old deletion re-triggering hooks on every evaluation."""
    (repo / "d" / "c.txt").unlink()
    set_mtime(repo / "d", MARKER - SEC)
    assert changes.changed_since(str(repo), MARKER, ["d/c.txt"]) == []


def test_deleted_top_level_file_uses_the_workspace_directory(repo: Path) -> None:
    """Guards against a root-level deletion looking up the wrong directory's mtime."""
    (repo / "a.txt").unlink()
    set_mtime(repo, MARKER - SEC)
    assert changes.changed_since(str(repo), MARKER, ["a.txt"]) == []
    set_mtime(repo, MARKER + SEC)
    assert changes.changed_since(str(repo), MARKER, ["a.txt"]) == ["a.txt"]


def test_file_whose_whole_directory_is_gone_counts(repo: Path) -> None:
    """Guards against a removed directory's files being lost (or raising)."""
    commit(repo, {"gone/deep/x.txt": "x\n", "gone/y.txt": "y\n", "all/z.txt": "z\n"})
    for path in ["gone/deep/x.txt", "gone/y.txt", "all/z.txt"]:
        (repo / path).unlink()
    (repo / "gone" / "deep").rmdir()
    (repo / "all").rmdir()
    set_mtime(repo / "gone", MARKER - SEC)
    set_mtime(repo, MARKER - SEC)
    paths = ["all/z.txt", "gone/deep/x.txt", "gone/y.txt"]
    assert dirty(repo) == paths
    got = changes.changed_since(str(repo), MARKER, paths)
    assert got == ["all/z.txt", "gone/deep/x.txt"]  # gone/ survives, dated before the marker


def test_symlink_uses_its_own_mtime_not_its_target(repo: Path) -> None:
    """Guards against following a symlink (lstat): a dangling one must not raise or vanish."""
    link = repo / "link"
    link.symlink_to("does-not-exist")
    set_mtime(link, MARKER + SEC)
    assert changes.changed_since(str(repo), MARKER, ["link"]) == ["link"]
    set_mtime(link, MARKER - SEC)
    assert changes.changed_since(str(repo), MARKER, ["link"]) == []


def test_awkward_names_are_looked_up_literally(repo: Path) -> None:
    """Guards against names with quotes, newlines or $(…) being mangled before the stat."""
    (repo / "日本語").mkdir()
    for i, name in enumerate(AWKWARD):
        (repo / name).write_text("x\n")
        set_mtime(repo / name, MARKER + (SEC if i % 2 else -SEC))
    assert changes.changed_since(str(repo), MARKER, AWKWARD) == AWKWARD[1::2]


def test_empty_dirty_list(repo: Path) -> None:
    """Guards against changed_since inventing changes when nothing is dirty."""
    assert changes.changed_since(str(repo), MARKER, []) == []


def test_directory_replaced_by_a_file(repo: Path) -> None:
    """Guards against a crash when a deleted file's directory is now a regular file."""
    (repo / "d" / "c.txt").unlink()
    (repo / "d").rmdir()
    (repo / "d").write_text("now a file\n")
    set_mtime(repo / "d", MARKER + SEC)
    listed = dirty(repo)
    assert listed == ["d", "d/c.txt"]
    assert changes.changed_since(str(repo), MARKER, listed) == ["d", "d/c.txt"]


def test_gits_output_is_capped_not_held_whole(repo: Path) -> None:
    """Root asks git (as the agent) for a root file hook's files: a workspace of a
    million long names must not cost root gigabytes. Past the cap, git is stopped."""
    for n in range(200):
        (repo / f"{'x' * 100}-{n}").write_text("")
    whole = initd_git.git(str(repo), "ls-files", "-z", "--others")
    assert whole.returncode == 0 and len(whole.stdout) > 20_000
    with pytest.raises(OSError, match="over 10000 bytes of output"):
        initd_git.run(["-C", str(repo), "ls-files", "-z", "--others"], limit=10_000)
