"""``spawn`` (initd/events/actions/spawn.py): a child pipeline in a fresh directory of its
own, its resolved inputs in inputs.json, initd's environment without the parent's event
variables, and what it writes to output.json its answer (never a link's target, never
past OUTPUT_LIMIT). End to end through the engine: tests/events/test_actions.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

from initd.events.actions import ActionResult, Status
from initd.events.actions.spawn import OUTPUT_LIMIT, child_directory, spawn
from initd.events.model import Spawn
from tests.support.calls import call


def spawned(tmp_path: Path, command: str, **inputs: object) -> ActionResult:
    made = call(Spawn("review", inputs), event="post_iteration", workspace=str(tmp_path),
                state_dir=str(tmp_path / "events"), payload={"title": "t \"q\""},
                variables={"SESSION": "s1", "ITERATION": 3, "SECRET_VAR": "x"},
                env={"PATH": os.environ["PATH"], "SECRET_VAR": "x", "KEPT": "k"},
                pipelines={"review": {"command": command}})
    return spawn(made, made.hook.spec)  # type: ignore[arg-type]


def test_a_child_with_its_inputs_and_its_output(tmp_path: Path) -> None:
    result = spawned(tmp_path, 'cat "$INPUTS"; printf "%s|%s|%s" "$PARENT_SESSION" '
                     '"$PIPELINE" "${SECRET_VAR-unset}${KEPT}" > "$OUTPUT"',
                     title="{{title}}", n=1)
    assert result.status == Status.OK
    assert json.loads(result.stdout) == {"title": "t \"q\"", "n": 1}
    assert result.response == "s1|review|unsetk"  # the parent's event variables: not passed
    child = tmp_path / "events" / "children" / "post_iteration-3"
    assert (child / "inputs.json").exists() and (child / "progress.md").read_text() == ""


def test_each_child_of_an_iteration_a_directory_of_its_own(tmp_path: Path) -> None:
    made = call(variables={"ITERATION": 2}, event="stop", state_dir=str(tmp_path))
    names = [child_directory(made).path for _ in range(3)]
    assert [os.path.basename(n) for n in names] == ["stop-2", "stop-2-2", "stop-2-3"]


def test_an_undefined_pipeline_is_an_error(tmp_path: Path) -> None:
    made = call(Spawn("nope", {}), state_dir=str(tmp_path))
    result = spawn(made, made.hook.spec)  # type: ignore[arg-type]
    assert result.status == Status.ERROR and "no pipeline 'nope'" in str(result.error)


def test_an_output_that_is_a_link_or_too_big_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("root's")
    linked = spawned(tmp_path, f'ln -s {tmp_path / "secret"} "$OUTPUT"')
    assert linked.response is None and "output.json" in str(linked.error)
    huge = spawned(tmp_path, f'head -c {OUTPUT_LIMIT + 1} /dev/zero > "$OUTPUT"')
    assert huge.response is None and "output.json" in str(huge.error)
    none = spawned(tmp_path, "true")
    assert none.status == Status.OK and none.response is None
