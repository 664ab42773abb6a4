"""Which devcontainer.json is the workspace's (initd/devcontainer/file.py): the two
places the spec names, first first; else the one sub-folder file; several sub-folder
files and nothing says which: none runs, said in one line however many the agent made;
no link followed to find them."""

from __future__ import annotations

from pathlib import Path

from initd.devcontainer import file


def put(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    return path


def test_none(tmp_path: Path) -> None:
    assert file.find(str(tmp_path)) is None


def test_the_first_place_comes_first(tmp_path: Path) -> None:
    second = put(tmp_path / ".devcontainer.json")
    assert file.find(str(tmp_path)) == file.Found(str(second))
    first = put(tmp_path / ".devcontainer" / "devcontainer.json")
    sub = put(tmp_path / ".devcontainer" / "py" / "devcontainer.json")
    assert file.find(str(tmp_path)) == file.Found(str(first), (str(second), str(sub)))


def test_one_sub_folder_file_runs_several_do_not(tmp_path: Path) -> None:
    only = put(tmp_path / ".devcontainer" / "py" / "devcontainer.json")
    assert file.find(str(tmp_path)) == file.Found(str(only))
    put(tmp_path / ".devcontainer" / "go" / "devcontainer.json")
    found = file.find(str(tmp_path))
    assert found is not None and found.path is None and len(found.others) == 2
    assert found.why_none().startswith("2 devcontainer.json files in sub-folders of "
                                       ".devcontainer (.devcontainer/go/devcontainer.json, ")


def test_many_are_said_in_one_line(tmp_path: Path) -> None:
    for n in range(12):
        put(tmp_path / ".devcontainer" / f"f{n:02}" / "devcontainer.json")
    found = file.find(str(tmp_path))
    assert found is not None and found.path is None
    said = found.why_none()
    assert "and 7 more" in said and "\n" not in said


def test_no_link_is_followed_to_find_one(tmp_path: Path) -> None:
    put(tmp_path / "elsewhere" / "py" / "devcontainer.json")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / ".devcontainer").symlink_to(tmp_path / "elsewhere")
    assert file.find(str(tmp_path / "ws")) is None
    (tmp_path / "ws" / ".devcontainer").unlink()
    (tmp_path / "ws" / ".devcontainer").mkdir()
    (tmp_path / "ws" / ".devcontainer" / "py").symlink_to(tmp_path / "elsewhere" / "py")
    assert file.find(str(tmp_path / "ws")) is None
    (tmp_path / "ws" / ".devcontainer.json").symlink_to("/etc/passwd")
    found = file.find(str(tmp_path / "ws"))  # named, for load to refuse and say why
    assert found is not None and found.path == str(tmp_path / "ws" / ".devcontainer.json")
