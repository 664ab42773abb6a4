"""``spawn``: a child pipeline (defined under ``pipelines:``), with its own directory
``{session_dir}/children/{hook_point}-{iteration}/``: ``inputs.json`` holds the resolved
``inputs``; ``progress.md`` is the child's own progress file (agent-pipelines' hook spec:
"child gets its own progress file"); the child's command runs from the workspace with
``CHILD_DIR``, ``INPUTS``, ``OUTPUT`` and ``PROGRESS`` pointing there, and what it writes
to ``output.json`` becomes ``SPAWN_OUTPUT``. A child gets initd's environment without the
parent's event variables: only what ``inputs`` passes."""

from __future__ import annotations

import json
import os

from initd.events import templates
from initd.events.actions import ActionResult, Call, Status
from initd.events.actions.process import run_process
from initd.events.model import Spawn
from initd.state.agentfs import Place

OUTPUT_LIMIT = 2**20  # of output.json, the child's answer


def spawn(call: Call, spec: Spawn) -> ActionResult:
    name = spec.pipeline
    pipeline = call.pipelines.get(name)
    if pipeline is None:  # the loader checks this; the file may have changed since
        return ActionResult(Status.ERROR, error=f"no pipeline {name!r} is defined")
    inputs, unknown = templates.data(spec.inputs, call.lookup)
    place = child_directory(call)
    directory = place.path
    inputs_file = os.path.join(directory, "inputs.json")
    output_file = os.path.join(directory, "output.json")
    with place.open() as where:
        where.write("inputs.json", json.dumps(inputs).encode())
        where.write("progress.md", b"")
    env = {k: v for k, v in call.env.items() if k not in call.variables}
    env.update(INPUTS=inputs_file, OUTPUT=output_file, CHILD_DIR=directory,
               PROGRESS=os.path.join(directory, "progress.md"),
               PARENT_SESSION=str(call.variables.get("SESSION", "")), PIPELINE=name)
    # From the workspace, as agent-pipelines runs `./scripts/engine.sh --session-dir
    # <child>`: the child's directory is its session's, not its working directory.
    child = call._replace(env=env)
    result = run_process(child, ["sh", "-c", pipeline["command"]], unknown=tuple(unknown))
    try:
        with place.open() as where:
            raw = where.read("output.json", OUTPUT_LIMIT)
    except OSError as err:  # a link, a FIFO, too big: the child's output is not used
        return result._replace(response=None, error=result.error or f"output.json: {err}")
    output = raw.decode(errors="replace").rstrip("\n") if raw is not None else None
    return result._replace(response=output)  # as $(cat output.json) gives it


def child_directory(call: Call) -> Place:
    """children/{hook_point}-{iteration}/, made fresh (a second child of the same
    iteration gets -2, -3, …); owned by whoever the hooks run as."""
    owner = (call.account.uid, call.account.gid) \
        if call.account is not None and os.geteuid() == 0 else None
    children = Place(call.state_dir, ("children",), owner)
    base = f"{call.event}-{call.variables.get('ITERATION') or 0}"
    name, n = base, 1
    with children.open(create=True) as where:
        while True:
            try:
                where.mkdir(name)
                return children.child(name)
            except FileExistsError:
                n += 1
                name = f"{base}-{n}"
