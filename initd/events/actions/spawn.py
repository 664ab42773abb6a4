"""``spawn``: a child pipeline (defined under ``pipelines:``), with its own directory
``{session_dir}/children/{hook_point}-{iteration}/``: ``inputs.json`` holds the resolved
``inputs``; the child's command runs from the workspace with ``CHILD_DIR``, ``INPUTS``
and ``OUTPUT`` pointing there, and what it writes to ``output.json`` becomes
``SPAWN_OUTPUT``. A child gets
initd's environment without the parent's event variables: only what ``inputs`` passes."""

from __future__ import annotations

import json
import os

from initd.events import templates
from initd.events.actions import ActionResult, Call
from initd.events.actions.process import run_process


def spawn(call: Call) -> ActionResult:
    name = call.hook.spec["pipeline"]
    pipeline = call.pipelines.get(name)
    if pipeline is None:  # the loader checks this; the file may have changed since
        return ActionResult("error", error=f"no pipeline {name!r} is defined")
    inputs, unknown = templates.data(call.hook.spec["inputs"], call.lookup)
    directory = child_directory(call)
    inputs_file = os.path.join(directory, "inputs.json")
    output_file = os.path.join(directory, "output.json")
    with open(inputs_file, "w", encoding="utf-8") as f:
        json.dump(inputs, f)
    env = {k: v for k, v in call.env.items() if k not in call.variables}
    env.update(INPUTS=inputs_file, OUTPUT=output_file, CHILD_DIR=directory,
               PARENT_SESSION=str(call.variables.get("SESSION", "")), PIPELINE=name)
    # From the workspace, as agent-pipelines runs `./scripts/engine.sh --session-dir
    # <child>`: the child's directory is its session's, not its working directory.
    child = call._replace(env=env)
    result = run_process(child, ["sh", "-c", pipeline["command"]], unknown=tuple(unknown))
    try:
        with open(output_file, encoding="utf-8") as f:
            output = f.read().rstrip("\n")  # as $(cat output.json) gives it
    except FileNotFoundError:
        output = None
    return result._replace(response=output)


def child_directory(call: Call) -> str:
    """children/{hook_point}-{iteration}/, made fresh (a second child of the same
    iteration gets -2, -3, …); owned by whoever the hooks run as."""
    base = os.path.join(call.state_dir, "children",
                        f"{call.event}-{call.variables.get('ITERATION') or 0}")
    directory, n = base, 1
    while True:
        try:
            os.makedirs(directory)
            break
        except FileExistsError:
            n += 1
            directory = f"{base}-{n}"
    if call.account is not None and os.geteuid() == 0:
        os.chown(directory, call.account.uid, call.account.gid)
    return directory
