"""The trust store (initd/hooks/truststore.py): hashes only, root's 0600 file in a 0700
directory; a store someone else could change (a link, a FIFO, loose modes, another
owner) refused, never read or written; an older store's approvals kept as hashes; a
question the agent's side may ask bounded."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from initd.hooks import truststore
from initd.hooks.truststore import Refused, Store

DIGEST = "a" * 64


def test_approvals_are_hashes_in_a_file_of_roots(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "lib" / "trust.json"))
    assert store.read().trusted == {}
    store.update(lambda t: t.update({"/ws/h.sh": {"digest": DIGEST, "at": "now"}}))
    path = tmp_path / "lib" / "trust.json"
    assert json.loads(path.read_text()) == {"version": 2, "trusted": {
        "/ws/h.sh": {"digest": DIGEST, "at": "now"}}}
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct((tmp_path / "lib").stat().st_mode & 0o777) == "0o700"
    assert store.read().trusted["/ws/h.sh"]["digest"] == DIGEST


def test_a_store_someone_else_could_change_is_refused(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "trust.json"))
    store.update(lambda t: None)
    path = tmp_path / "trust.json"
    path.chmod(0o666)
    with pytest.raises(Refused, match=r"writable by group or others \(mode 0666\)"):
        store.read()
    path.chmod(0o600)
    path.rename(tmp_path / "real.json")
    path.symlink_to(tmp_path / "real.json")
    with pytest.raises(Refused, match="a symbolic link: refused"):
        store.read()
    with pytest.raises(Refused):
        store.update(lambda t: t.update({"k": {"digest": DIGEST}}))
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(Refused, match="not a regular file"):
        store.read()


def test_a_loose_directory_is_refused_a_sticky_one_is_not(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    folder.chmod(0o777)
    with pytest.raises(Refused, match="its directory is writable by group or others"):
        Store(str(folder / "trust.json")).read()
    folder.chmod(0o1777)
    assert Store(str(folder / "trust.json")).read().trusted == {}


@pytest.mark.parametrize(("text", "said"), [
    ('{"version": 3}', "version 3"), ("[1]", "version None"), ("{", "version None")])
def test_a_store_of_another_version_is_refused(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "trust.json"
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(Refused, match=said):
        Store(str(path)).read()


def test_an_older_store_keeps_its_hashes_and_says_what_it_dropped(tmp_path: Path) -> None:
    path = tmp_path / "trust.json"
    path.write_text(json.dumps({"version": 1, "trusted": {
        "a": {"digest": DIGEST, "label": "rm -rf x"}, "b": {"digest": "nope"}, "c": 3}}))
    path.chmod(0o600)
    found = Store(str(path)).read()
    assert found.trusted == {"a": {"digest": DIGEST, "at": None}}
    assert len(found.notes) == 2 and "commands an older initd kept" in found.notes[0]
    assert "2 old approval(s) had no valid hash" in found.notes[1]


@pytest.mark.parametrize(("key", "digest", "ok"), [
    ("/ws/h.sh", DIGEST, True), ("/ws/c.json#hooks.Stop[0]", "0" * 64, True),
    ("", DIGEST, False), ("k" * (truststore.KEY_LIMIT + 1), DIGEST, False),
    ("/ws/h.sh", "A" * 64, False), ("/ws/h.sh", DIGEST[:-1], False), (1, DIGEST, False),
    ("/ws/h.sh", None, False)])
def test_a_question_the_agents_side_may_ask(key: object, digest: object, ok: bool) -> None:
    assert truststore.well_formed(key, digest) is ok
