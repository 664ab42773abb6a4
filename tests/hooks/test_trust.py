"""Trust in the workspace's hooks, by content (initd/hooks/trust.py): a script's entry is
the hash of its path and exact bytes; with enforcement a hook runs only as approved; the
image's hooks are trusted; root's answer to the agent's side says the same words for
every "no" and looks up only keys of the service's own workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from initd.hooks import trust
from initd.hooks.model import Hook
from initd.hooks.trust import UNAPPROVED, Trust, for_script


def script(folder: Path, name: str = "10-a.sh", body: str = "exit 0\n") -> Hook:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return Hook(id=name, name=name, type="session", path=str(path), directory=str(folder))


def test_a_scripts_entry_is_its_path_and_exact_bytes(tmp_path: Path) -> None:
    hook = script(tmp_path)
    entry = for_script(hook.path)
    assert entry is not None and entry.key == hook.path
    assert entry == for_script(hook.path, b"exit 0\n")  # root's copy: judged the same
    assert entry != for_script(hook.path, b"exit 1\n")
    other = script(tmp_path, "20-b.sh")
    assert for_script(other.path).digest != entry.digest  # the same bytes elsewhere
    assert for_script(str(tmp_path / "none.sh")) is None
    assert for_script(hook.path, b"x" * (trust.SCRIPT_LIMIT + 1)) is None


def test_enforced_a_hook_runs_only_as_approved(tmp_path: Path) -> None:
    store = str(tmp_path / "lib" / "trust.json")
    hook = script(tmp_path / "ws")
    assert Trust(store).refusal(hook) is None  # not enforced: every hook runs
    enforcing = Trust(store, enforce=True, image_dir=str(tmp_path / "image"))
    assert "not trusted yet: a person must approve it" in str(enforcing.refusal(hook))
    entry = for_script(hook.path)
    assert enforcing.approve([entry]) == [(entry, "new")]  # type: ignore[list-item]
    assert enforcing.refusal(hook) is None
    assert enforcing.approve([entry]) == [(entry, "unchanged")]  # type: ignore[list-item]
    Path(hook.path).write_text("exit 1\n")
    assert "changed since it was trusted" in str(enforcing.refusal(hook))
    assert enforcing.refusal(hook, b"exit 0\n") is None  # the bytes that will run
    image = script(tmp_path / "image")
    assert enforcing.refusal(image) is None  # the image's: trusted


def test_asked_of_root_the_agents_side_judges_by_its_answer(tmp_path: Path) -> None:
    asked: list[tuple[str, str]] = []
    hook = script(tmp_path / "ws")

    def ask(key: str, digest: str) -> str | None:
        asked.append((key, digest))
        return "no"

    service = Trust(str(tmp_path / "unreadable"), enforce=True).asking(ask)
    assert service.refusal(hook) == f"{hook.path} is no"
    assert set(asked) == {(hook.path, for_script(hook.path).digest)}  # type: ignore[union-attr]


def test_a_store_that_cannot_be_read_approves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    path.write_text("{}")
    path.chmod(0o666)
    hook = script(tmp_path / "ws")
    said = Trust(str(path), enforce=True).verdict(hook.path, "a" * 64)
    assert said is not None and said.startswith("not trusted: the approvals cannot be read")


@pytest.fixture
def approved(tmp_path: Path) -> tuple[dict[str, str], str, str]:
    ws = tmp_path / "ws"
    hook = script(ws)
    entry = for_script(hook.path)
    assert entry is not None
    store = str(tmp_path / "lib" / "trust.json")
    Trust(store).approve([entry])
    settings = {"INITD_TRUST": "1", "INITD_TRUST_FILE": store, "INITD_WORKSPACE": str(ws)}
    return settings, entry.key, entry.digest


def test_roots_answer(approved: tuple[dict[str, str], str, str]) -> None:
    settings, key, digest = approved
    assert trust.answer(settings, key, digest) == ({"trusted": True}, None)
    assert trust.answer(settings, key, "b" * 64) == ({"trusted": False, "why": UNAPPROVED},
                                                     None)
    assert trust.answer({**settings, "INITD_TRUST": "0"}, key, digest)[0]["trusted"] is False


@pytest.mark.parametrize("workspace", ["/elsewhere", "", "WS_PARENT"])
def test_a_key_outside_the_services_workspace_is_never_confirmed(
        approved: tuple[dict[str, str], str, str], workspace: str) -> None:
    settings, key, digest = approved
    if workspace == "WS_PARENT":
        workspace = str(Path(settings["INITD_WORKSPACE"]) / "sub")
    answer, _ = trust.answer({**settings, "INITD_WORKSPACE": workspace}, key, digest)
    assert answer == {"trusted": False, "why": UNAPPROVED}  # the same words as any "no"


@pytest.mark.parametrize(("key", "within"), [
    ("/ws/a.sh", True), ("/ws/.claude/settings.json#hooks.Stop[0]", True),
    ("/ws/../etc/h.sh", False), ("/ws//a.sh", False), ("/wsx/a.sh", False), ("/ws", False),
    ("a.sh", False)])
def test_within(key: str, within: bool) -> None:
    assert trust._within(key, "/ws") is within
