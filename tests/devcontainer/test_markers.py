"""The markers of what has run in this container (initd/devcontainer/markers.py): the
container's identity is stable and says where it is from; a stage done counts for this
file in this container only, and a marker file that is not ours counts for nothing."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from initd.config import log
from initd.devcontainer import markers
from initd.devcontainer.config import parse
from initd.state.agentfs import Place


def test_the_container_identity_is_stable_and_says_where_it_is_from() -> None:
    first = markers.container_identity()
    assert first == markers.container_identity()
    assert first.split(":")[0] in ("containerenv", "hostname-mount", "host")


def test_a_stage_done_is_marked_for_this_container_and_this_file(tmp_path: Path) -> None:
    ctx = SimpleNamespace(state=Place(str(tmp_path / "state")), log=log.get())
    config = parse({"onCreateCommand": "x"}, str(tmp_path / "a.json"), str(tmp_path))
    kept = markers.Markers(ctx, config)  # type: ignore[arg-type]
    assert not kept.done("onCreateCommand")
    kept.mark("onCreateCommand")
    assert kept.done("onCreateCommand") and not kept.done("postCreateCommand")
    other = markers.Markers(ctx, config._replace(path=str(tmp_path / "b.json")))
    assert not other.done("onCreateCommand")  # another file's: not this one's
    state = tmp_path / "state" / markers.MARKERS / "lifecycle.json"
    data = json.loads(state.read_text())
    data["configs"][config.path]["container"] = "another:container"
    state.write_text(json.dumps(data))
    assert not markers.Markers(ctx, config).done("onCreateCommand")  # another container's
    state.write_text('{"configs": [1]}')
    assert not markers.Markers(ctx, config).done("onCreateCommand")  # not ours: nothing
    markers.Markers(ctx, config).mark("onCreateCommand")
    assert markers.Markers(ctx, config).done("onCreateCommand")

