"""devcontainer.json's lifecycle commands as the Dev Container specification states them,
case by case, each with the passage it comes from; initd booted as PID 1 (a PID
namespace of its own) for a real agent user, over a workspace that user owns.

The passages are quoted from the specification as published at containers.dev (its
source: github.com/devcontainers/spec, docs/specs/devcontainerjson-reference.md,
docs/specs/devcontainer-reference.md and schemas/devContainer.base.schema.json); where
the specification leaves a choice open, the reference CLI (github.com/devcontainers/cli,
src/spec-common/injectHeadless.ts, src/spec-configuration/configurationCommonUtils.ts)
says how a tool makes it.

How the cases observe: every command records itself in files of a directory the agent
writes (``rec``); an order is proved by one process waiting for a file another writes
(never by wall-clock time), each wait with a generous deadline on that event only. The
environment cases are in test_devcontainer_spec_env.py.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from tests.conformance.devcontainer_support import (  # fixtures and helpers
    STAGES,
    WAIT_TICKS,
    agent,
    agent_sh,
    boot,
    config,
    image,
    order,
    rec,
    record,
    said,
    sid,
    until,
    wait_sh,
    ws,
)
from tests.support.attack import Agent

pytestmark = pytest.mark.timeout(300)
__all__ = ["agent", "boot", "image", "rec", "sid", "ws"]  # (fixtures used by name)


@pytest.mark.parametrize("rel", [".devcontainer/devcontainer.json", ".devcontainer.json"])
def test_each_well_known_location_is_found(boot, agent: Agent, ws: Path, rec: Path,
                                           rel: str) -> None:
    """https://containers.dev/implementors/spec/#devcontainerjson: "Products using it should
    expect to find a `devcontainer.json` file in one or more of the following locations (in
    order of precedence): - .devcontainer/devcontainer.json - .devcontainer.json - .devcontainer/
    `<folder>`/devcontainer.json (where `<folder>` is a sub-folder, one level deep)"."""
    config(ws, agent, {"onCreateCommand": record(rec, "found")}, rel)
    init = boot("true")
    assert init.wait(120) == 0, init.stderr
    assert order(rec) == ["found"], init.stderr


@pytest.mark.parametrize(("winner", "loser"), [
    (".devcontainer/devcontainer.json", ".devcontainer.json"),
    (".devcontainer/devcontainer.json", ".devcontainer/dcspecsub/devcontainer.json"),
    (".devcontainer.json", ".devcontainer/dcspecsub/devcontainer.json"),
])
def test_the_first_location_in_precedence_wins(boot, agent: Agent, ws: Path, rec: Path,
                                               winner: str, loser: str) -> None:
    """https://containers.dev/implementors/spec/#devcontainerjson: "in one or more of the
    following locations (in order of precedence)". The reference CLI takes the first
    well-known path that is a file (configurationCommonUtils.ts, getDevContainerConfigPathIn)."""
    config(ws, agent, {"onCreateCommand": record(rec, "winner")}, winner)
    config(ws, agent, {"onCreateCommand": record(rec, "loser")}, loser)
    init = boot("true")
    assert init.wait(120) == 0, init.stderr
    assert order(rec) == ["winner"], init.stderr


def test_a_subfolder_file_alone_is_found_or_said(boot, agent: Agent, ws: Path,
                                                 rec: Path) -> None:
    """https://containers.dev/implementors/spec/#devcontainerjson: ".devcontainer/`<folder>`/
    devcontainer.json (where `<folder>` is a sub-folder, one level deep)" is the third
    location. As the only file it is run, or initd says in a line (at its default verbosity)
    that it is not: never ignored without a word."""
    config(ws, agent, {"onCreateCommand": record(rec, "subfolder")},
           ".devcontainer/dcspecsub/devcontainer.json")
    init = boot("true", verbose=False)
    assert init.wait(120) == 0, init.stderr
    named = said(init, "dcspecsub", "devcontainer.json")
    assert order(rec) == ["subfolder"] or len(named) == 1, \
        f"ran {order(rec)}; initd said: {init.stderr!r}"


def test_two_subfolder_files_are_not_both_run_nor_passed_over_silently(
        boot, agent: Agent, ws: Path, rec: Path) -> None:
    """https://containers.dev/implementors/spec/#devcontainerjson: `<folder>` is "a sub-folder"
    and each file describes a container of its own; the specification names no choice
    between two. So at most one runs, and one that is passed over is said in a line."""
    config(ws, agent, {"onCreateCommand": record(rec, "alpha")},
           ".devcontainer/dcspeca/devcontainer.json")
    config(ws, agent, {"onCreateCommand": record(rec, "beta")},
           ".devcontainer/dcspecb/devcontainer.json")
    init = boot("true", verbose=False)
    assert init.wait(120) == 0, init.stderr
    ran = order(rec)
    assert len(ran) <= 1, ran
    passed_over = "dcspecb" if ran == ["alpha"] else "dcspeca"
    if ran == []:
        assert said(init, "dcspeca") and said(init, "dcspecb"), \
            f"neither file ran, and initd said: {init.stderr!r}"
    else:
        assert said(init, passed_over), f"ran {ran}; initd said: {init.stderr!r}"


# --- the stages: their order, and which ones the agent waits for (waitFor)


def staged(rec: Path, waits_for_agent: set[str] = frozenset(), fail: str = "") -> dict[str, str]:
    """The four stages, each recording itself; those in ``waits_for_agent`` first wait for
    the agent's marker, ``fail`` records itself and exits 3."""
    body = {}
    for stage in STAGES:
        command = record(rec, stage)
        if stage in waits_for_agent:
            command = f"{wait_sh(rec / 'agent')} && {command}"
        if stage == fail:
            command += " && exit 3"
        body[stage] = command
    return body


def test_the_stages_run_in_order_and_the_agent_waits_for_update_content_by_default(
        boot, agent: Agent, ws: Path, rec: Path) -> None:
    """https://containers.dev/implementors/json_reference/#lifecycle-scripts: "The table below
    lists a set of command properties [...] in the order in which they are run"; `waitFor`:
    "Defaults to `updateContentCommand`. This allows you to use `onCreateCommand` or
    `updateContentCommand` for steps that must happen before `devcontainer.json` supporting
    tools connect while still using `postCreateCommand` for steps that can happen behind the
    scenes afterwards." https://containers.dev/implementors/spec/#post-container-creation: "By
    default, `postCreateCommand` is executed in the background after reporting the successful
    creation of the development environment."

    postCreateCommand waits for the agent: had initd waited for it, the agent would never
    start."""
    config(ws, agent, staged(rec, waits_for_agent={"postCreateCommand"}))
    init = boot(*agent_sh(f"{record(rec, 'agent')} && {wait_sh(rec / 'postStartCommand')}"))
    assert init.wait(180) == 0, (order(rec), init.stderr)
    assert order(rec) == ["onCreateCommand", "updateContentCommand", "agent",
                          "postCreateCommand", "postStartCommand"], init.stderr


@pytest.mark.parametrize(("wait_for", "expected"), [
    ("initializeCommand", ["agent", "onCreateCommand", "updateContentCommand",
                           "postCreateCommand", "postStartCommand"]),
    ("onCreateCommand", ["onCreateCommand", "agent", "updateContentCommand",
                         "postCreateCommand", "postStartCommand"]),
    ("updateContentCommand", ["onCreateCommand", "updateContentCommand", "agent",
                              "postCreateCommand", "postStartCommand"]),
    ("postCreateCommand", ["onCreateCommand", "updateContentCommand", "postCreateCommand",
                           "agent", "postStartCommand"]),
    ("postStartCommand", ["onCreateCommand", "updateContentCommand", "postCreateCommand",
                          "postStartCommand", "agent"]),
])
def test_wait_for_names_the_last_stage_before_the_agent(boot, agent: Agent, ws: Path,
                                                        rec: Path, wait_for: str,
                                                        expected: list[str]) -> None:
    """https://containers.dev/implementors/spec/#post-container-creation: "If the `waitFor`
    property is defined, then execution should block until all commands in the sequence up
    to the specified property have executed." json_reference, `waitFor`: "An enum that
    specifies the command any tool should wait for before connecting." The schema's enum:
    "initializeCommand", "onCreateCommand", "updateContentCommand", "postCreateCommand",
    "postStartCommand" (`initializeCommand` runs on the host, before all the others).

    The first stage after the one named waits for the agent's marker (so the agent must
    start before it); the agent waits for the last stage to be done."""
    first_after = expected[expected.index("agent") + 1] if expected[-1] != "agent" else None
    body = staged(rec, waits_for_agent={first_after} if first_after else set())
    config(ws, agent, {**body, "waitFor": wait_for})
    init = boot(*agent_sh(f"{record(rec, 'agent')} && {wait_sh(rec / 'postStartCommand')}"))
    assert init.wait(180) == 0, (order(rec), init.stderr)
    assert order(rec) == expected, init.stderr


def test_once_per_container_stages_run_once_and_post_start_at_every_start(
        boot, agent: Agent, ws: Path, rec: Path) -> None:
    """https://containers.dev/implementors/spec/#post-container-creation: "`onCreateCommand`,
    `updateContentCommand` and `postCreateCommand`. This set of commands is executed in
    sequence on a container the first time it's created"; json_reference, `postStartCommand`:
    "A command to run each time the container is successfully started."
    https://containers.dev/implementors/spec/#environment-resume: "To resume the environment
    from a stopped state: [...] Additionally, execute the `postStartCommand` and
    `postAttachCommand` in the container."

    Two starts of initd in one container: the second is a resume."""
    config(ws, agent, {**staged(rec), "waitFor": "postStartCommand"})
    for start in (1, 2):
        init = boot(*agent_sh(f"echo agent{start} >> {rec}/order"))
        assert init.wait(120) == 0, (start, order(rec), init.stderr)
    assert order(rec) == ["onCreateCommand", "updateContentCommand", "postCreateCommand",
                          "postStartCommand", "agent1", "postStartCommand", "agent2"]


def test_post_attach_command_runs_once_the_agent_is_up_or_is_said(
        boot, agent: Agent, ws: Path, rec: Path) -> None:
    """json_reference, `postAttachCommand`: "A command to run each time a tool has
    successfully attached to the container."; the schema: "This command is run after
    "postStartCommand"." The agent is what attaches; initd runs the command once the agent
    is up, or says in one line at boot (at its default verbosity) that it does not run it.
    Never silently ignored.

    When the agent is up is the agent's to say: it leaves its marker, then listens on a
    port, and initd is told to judge readiness by that port (``--ready-port``)."""
    attach = (f"if [ -e {rec}/agent ]; then touch {rec}/attach-after-agent; "
              f"else touch {rec}/attach-before-agent; fi")
    config(ws, agent, {"postStartCommand": record(rec, "postStartCommand"),
                       "postAttachCommand": attach})
    with socket.socket() as probe:  # a free port for the agent
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    up = (f"import os, socket, time; open({str(rec / 'agent')!r}, 'w').close(); "
          f"s = socket.socket(); s.bind(('127.0.0.1', {port})); s.listen(); "
          f"[time.sleep(0.05) for _ in range({WAIT_TICKS}) "
          f"if not os.path.exists({str(rec / 'release')!r})]")
    init = boot(sys.executable, "-c", up, verbose=False, more=("--ready-port", str(port)))
    until(lambda: (rec / "attach-after-agent").exists() or (rec / "attach-before-agent").exists()
          or said(init, "postAttachCommand"), timeout=90)
    (rec / "release").touch()
    assert init.wait(120) == 0, init.stderr
    assert not (rec / "attach-before-agent").exists(), "postAttachCommand ran before the agent"
    # initd's choice (docs/devcontainer.md): it runs, once the agent is up
    assert (rec / "attach-after-agent").exists(), \
        f"postAttachCommand did not run; initd said: {init.stderr!r}"
    assert order(rec) == ["postStartCommand"]


# --- the command forms


def test_a_string_runs_in_sh(boot, agent: Agent, ws: Path, rec: Path) -> None:
    """https://containers.dev/implementors/json_reference/#lifecycle-scripts: "if the value is a
    single string, it will be run in `/bin/sh`. Use `&&` in a string to execute multiple
    commands." #formatting-string-vs-array-properties: ""postAttachCommand": "echo foo='bar'"
    [...] will remove the single quotes as part of the shell's parsing"."""
    config(ws, agent, {"onCreateCommand":
                       f"echo foo='bar' > {rec}/string && echo second >> {rec}/string"})
    init = boot("true")
    assert init.wait(120) == 0, init.stderr
    assert (rec / "string").read_text() == "foo=bar\nsecond\n", init.stderr


def test_an_array_runs_without_a_shell(boot, agent: Agent, ws: Path, rec: Path) -> None:
    """https://containers.dev/implementors/json_reference/#lifecycle-scripts: "The array syntax
    `["yarn", "install"]` will invoke the command (in this case `yarn`) directly without using
    a shell." #formatting-string-vs-array-properties: "the array format will keep the single
    quotes"."""
    literal = "foo='bar' $HOME"
    config(ws, agent, {"onCreateCommand": ["touch", f"{rec}/{literal}"]})
    init = boot("true")
    assert init.wait(120) == 0, init.stderr
    assert sorted(p.name for p in rec.iterdir()) == [literal], init.stderr


def test_an_object_runs_its_commands_in_parallel(boot, agent: Agent, ws: Path,
                                                 rec: Path) -> None:
    """https://containers.dev/implementors/spec/#parallel-lifecycle-script-execution: "The key
    of the `object` will be a unique name for the command and the value will be the `string`
    or `array` command. [...] Each entry in the `object` will be run in parallel during that
    lifecycle step." Each command waits for a file the other writes: run one after the
    other, the first would wait in vain; the next stage runs once both are done."""
    config(ws, agent, {
        "onCreateCommand": {
            "left": f"touch {rec}/left.up && {wait_sh(rec / 'right.up')} && touch {rec}/left.done",
            "right": ["sh", "-c",
                      f"touch {rec}/right.up && {wait_sh(rec / 'left.up')} && "
                      f"touch {rec}/right.done"],
        },
        "updateContentCommand": f"test -e {rec}/left.done && test -e {rec}/right.done && "
                                f"{record(rec, 'next')}",
    })
    init = boot("true")
    assert init.wait(180) == 0, init.stderr
    assert (rec / "left.done").exists() and (rec / "right.done").exists(), init.stderr
    assert order(rec) == ["next"], init.stderr


def test_commands_run_from_the_workspace_folder(boot, agent: Agent, ws: Path,
                                                rec: Path) -> None:
    """https://containers.dev/implementors/json_reference/#lifecycle-scripts: "Each command
    property is an string or list of command arguments that should execute from the
    `workspaceFolder`." (With no `workspaceFolder` in the file, the workspace.)"""
    config(ws, agent, {"onCreateCommand": f"pwd > {rec}/string-cwd",
                       "updateContentCommand": ["sh", "-c", f"pwd > {rec}/array-cwd"],
                       "postCreateCommand": {"named": f"pwd > {rec}/object-cwd"},
                       "waitFor": "postCreateCommand"})
    init = boot("true")
    assert init.wait(120) == 0, init.stderr
    for form in ("string", "array", "object"):
        assert (rec / f"{form}-cwd").read_text().strip() == str(ws), (form, init.stderr)


# --- a failed stage


@pytest.mark.parametrize("failing", STAGES)
def test_a_failed_stage_stops_the_later_ones(boot, agent: Agent, ws: Path, rec: Path,
                                             failing: str) -> None:
    """https://containers.dev/implementors/json_reference/#lifecycle-scripts: "If one of the
    lifecycle scripts fails, any subsequent scripts will not be executed. For instance, if
    `postCreateCommand` fails, `postStartCommand` and any following scripts will be skipped."

    With `waitFor: postStartCommand` every stage is settled before the agent would start;
    whether the agent then starts the specification leaves to the tool, so the case waits
    for the agent or initd's exit, whichever comes."""
    config(ws, agent, {**staged(rec, fail=failing), "waitFor": "postStartCommand"})
    init = boot(*agent_sh(f"echo agent >> {rec}/order"))
    assert until(lambda: "agent" in order(rec) or init.proc.poll() is not None), \
        (order(rec), init.stderr)
    init.wait(120)
    ran = [name for name in order(rec) if name != "agent"]
    assert ran == STAGES[:STAGES.index(failing) + 1], init.stderr


def test_an_object_stage_fails_when_one_of_its_commands_fails(boot, agent: Agent, ws: Path,
                                                              rec: Path) -> None:
    """https://containers.dev/implementors/spec/#parallel-lifecycle-script-execution: "Each
    command must exit successfully for the stage to be considered successful." and a failed
    stage stops the ones after it (json_reference, #lifecycle-scripts)."""
    config(ws, agent, {"onCreateCommand": {"ok": record(rec, "ok"), "bad": "exit 3"},
                       "updateContentCommand": record(rec, "updateContentCommand"),
                       "postCreateCommand": record(rec, "postCreateCommand"),
                       "postStartCommand": record(rec, "postStartCommand"),
                       "waitFor": "postStartCommand"})
    init = boot(*agent_sh(f"echo agent >> {rec}/order"))
    assert until(lambda: "agent" in order(rec) or init.proc.poll() is not None), \
        (order(rec), init.stderr)
    init.wait(120)
    assert [name for name in order(rec) if name != "agent"] == ["ok"], init.stderr
