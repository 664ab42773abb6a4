"""devcontainer.json as initd reads it (initd/devcontainer/config.py): the lifecycle keys
checked into a Config whose problems name the file and the key; the variables it does not
know warned; the environment, the container's then the remote's.

Real files in tmp_path (links, FIFOs, huge files included); the processes are in
test_boot.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from initd.config.problems import NOTE, WARNING
from initd.devcontainer import config as devcontainer
from initd.devcontainer.config import Config


def write(ws: Path, data: object | str, name: str = ".devcontainer/devcontainer.json") -> Path:
    path = ws / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def load(ws: Path, data: object | str) -> Config:
    write(ws, data)
    config = devcontainer.load(str(ws))
    assert config is not None
    return config


def problems(config: Config) -> list[tuple[str | None, str, str]]:
    return [(p.key, p.severity, p.reason) for p in config.problems]


def test_every_command_form(tmp_path: Path) -> None:
    config = load(tmp_path, """{
        // the three forms, with comments and trailing commas
        "onCreateCommand": "npm ci && echo 'http://x//y'",
        "updateContentCommand": ["make", "-C", "$HOME", ],
        "postCreateCommand": {"db": "service postgresql start", "web": ["npm", "start"],},
        "postStartCommand": "",
        "image": "ignored: the tool's", "features": {"x": {}},
    }""")
    assert config.problems == ()
    assert config.path == str(tmp_path / ".devcontainer" / "devcontainer.json")
    assert [(s.key, s.parallel) for s in config.stages] == [
        ("onCreateCommand", False), ("updateContentCommand", False),
        ("postCreateCommand", True)]  # (an empty command runs nothing)
    on_create, update, post = (s.commands for s in config.stages)
    assert on_create[0].argv(devcontainer.Substitution({}, "/ws")) == (
        "/bin/sh", "-c", "npm ci && echo 'http://x//y'")
    assert update[0].argv(devcontainer.Substitution({"HOME": "/root"}, "/ws")) == (
        "make", "-C", "$HOME")  # no shell, no expansion
    assert [(c.label, c.form, c.text) for c in post] == [
        ("postCreateCommand.db", "string", "service postgresql start"),
        ("postCreateCommand.web", "array", "npm start")]
    ids = [c.hook(config).id for s in config.stages for c in s.commands]
    assert ids[:2] == ["devcontainer-oncreatecommand", "devcontainer-updatecontentcommand"]
    assert ids[2].startswith("devcontainer-postcreatecommand-db-") and len(set(ids)) == 4
    assert config.wait_for == "updateContentCommand"
    assert [config.waited(s) for s in devcontainer.STAGES] == [True, True, False, False,
                                                                False]


@pytest.mark.parametrize("data, key, reason", [
    ({"onCreateCommand": 5}, "onCreateCommand", "expected a string (run by /bin/sh -c) or "
     "an array of strings (run without a shell), or an object of named commands (run in "
     "parallel), got a number 5"),
    ({"postStartCommand": ["ls", 1]}, "postStartCommand", "got an array ['ls', 1]"),
    ({"postCreateCommand": {"a": "true", "b": {"c": "x"}}}, "postCreateCommand.b",
     "expected a string (run by /bin/sh -c) or an array of strings (run without a shell), "
     "got an object {'c': 'x'}"),
    ({"onCreateCommand": True}, "onCreateCommand", "got true or false True"),
    ({"waitFor": "postAttachCommand"}, "waitFor", "expected one of initializeCommand, "
     "onCreateCommand, updateContentCommand, postCreateCommand, postStartCommand, got "
     "'postAttachCommand'"),
    ({"remoteUser": 0}, "remoteUser", "expected a user name, got 0"),
    ({"containerUser": ""}, "containerUser", "expected a user name, got ''"),
    ({"remoteEnv": ["A=1"]}, "remoteEnv", "expected an object of variables, got an array"),
    ({"containerEnv": {"A": None}}, "containerEnv.A", "expected text, got null None"),
    ({"remoteEnv": {"A": 1}}, "remoteEnv.A", "expected text, or null to unset it, got a "
     "number 1"),
    ({"remoteEnv": {"A=B": "x"}}, "remoteEnv.A=B", "not a variable name"),
    ({"onCreateCommand": "a\u0000b"}, "onCreateCommand", "a NUL character cannot be in a "
     "command"),
    ({"customizations": {"initd": {"timeout": -1}}}, "customizations.initd.timeout",
     "expected a number of seconds > 0, got -1"),
    ({"customizations": {"initd": {"limits": {"ram": 1}}}}, "customizations.initd.limits",
     "unknown ram (known: cpu, memory, processes, file_size)"),
    ({"customizations": {"initd": []}}, "customizations.initd", "expected an object, got "
     "an array"),
])
def test_a_wrong_key_is_an_error_naming_file_and_key(tmp_path: Path, data: object, key: str,
                                                     reason: str) -> None:
    config = load(tmp_path, data)
    [error] = config.errors
    assert error.key == key and reason in error.reason, error
    assert str(error).startswith(f"{config.path}: {key}: ")


@pytest.mark.parametrize("text, reason", [
    ("[]", "expected an object at the top, got an array"),
    ('{"onCreateCommand": "x",,}', "not valid JSON with comments: Expecting property name "
     "enclosed in double quotes: line 1 column 25 (char 24)"),
    ('{"a": 1} /* open', "not valid JSON with comments: line 1: a /* comment is never closed"),
    ("\xff", None),
])
def test_a_broken_file_is_one_error_and_nothing_to_run(tmp_path: Path, text: str,
                                                       reason: str | None) -> None:
    path = write(tmp_path, "")
    path.write_bytes(text.encode("latin-1") if text == "\xff" else text.encode())
    config = devcontainer.load(str(tmp_path))
    assert config is not None and config.stages == ()
    [error] = config.errors
    assert error.key is None and error.path == str(path)
    assert (reason is None and error.reason.startswith("cannot read: ")) or \
        error.reason == reason


def test_root_reads_no_link_no_fifo_no_huge_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"onCreateCommand": "echo SECRET-TOKEN"}')
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".devcontainer.json").symlink_to(secret)
    [error] = devcontainer.load(str(ws)).errors  # type: ignore[union-attr]
    assert "a symbolic link: not read" in error.reason and "SECRET" not in str(error)
    (ws / ".devcontainer.json").unlink()
    os.mkfifo(ws / ".devcontainer.json")  # (opened non-blocking: never hangs)
    [error] = devcontainer.load(str(ws)).errors  # type: ignore[union-attr]
    assert "not a regular file: not read" in error.reason
    (ws / ".devcontainer.json").unlink()
    (ws / ".devcontainer").symlink_to(tmp_path)  # a link on the way
    (tmp_path / "devcontainer.json").write_text("{}")
    [error] = devcontainer.load(str(ws)).errors  # type: ignore[union-attr]
    assert "is a symbolic link or not a directory" in error.reason
    (ws / ".devcontainer").unlink()
    write(ws, " " * (devcontainer.LIMIT + 1))
    [error] = devcontainer.load(str(ws)).errors  # type: ignore[union-attr]
    assert f"over {devcontainer.LIMIT} bytes: not read" in error.reason


def test_which_file_and_what_is_not_run_is_said(tmp_path: Path) -> None:
    assert devcontainer.load(str(tmp_path)) is None
    write(tmp_path, {"onCreateCommand": "b"}, ".devcontainer.json")
    assert devcontainer.load(str(tmp_path)).stages[0].commands[0].args == ("b",)  # type: ignore[union-attr]
    config = load(tmp_path, {"onCreateCommand": "a", "initializeCommand": "docker pull x",
                             "postAttachCommand": ["code", "."]})
    assert config.stages[0].commands[0].args == ("a",)
    assert problems(config) == [
        ("initializeCommand", NOTE, "not run: it runs on the host before the container is "
         "created, which is the dev container tool's job (initd runs inside)"),
        (None, NOTE, f"ignored: {config.path} comes first")]
    assert config.problems[-1].path == str(tmp_path / ".devcontainer.json")
    assert config.ignored == ("initializeCommand",)
    # postAttachCommand runs, last, never waited for (the agent is what attaches)
    assert [s.key for s in config.stages] == ["onCreateCommand", "postAttachCommand"]
    assert config.stages[1].commands[0].args == ("code", ".")
    assert not config._replace(wait_for="postStartCommand").waited("postAttachCommand")
    assert config.errors == ()


def test_unknown_variables_are_warned_once_and_a_shells_own_are_not(tmp_path: Path) -> None:
    config = load(tmp_path, {"onCreateCommand": "echo ${HOME} ${X:-y} ${devcontainerId}",
                             "remoteEnv": {"A": "${localEnv}${containerEnvv:B}"}})
    assert problems(config) == [
        ("onCreateCommand", WARNING, "${devcontainerId}: not a variable initd knows (known: "
         "containerEnv, containerWorkspaceFolder, containerWorkspaceFolderBasename, env, "
         "localEnv, localWorkspaceFolder, localWorkspaceFolderBasename): left as written"),
        ("remoteEnv.A", WARNING, "${localEnv}: not a variable initd knows (known: "
         "containerEnv, containerWorkspaceFolder, containerWorkspaceFolderBasename, env, "
         "localEnv, localWorkspaceFolder, localWorkspaceFolderBasename): left as written"),
        ("remoteEnv.A", WARNING, "${containerEnvv:B}: not a variable initd knows (known: "
         "containerEnv, containerWorkspaceFolder, containerWorkspaceFolderBasename, env, "
         "localEnv, localWorkspaceFolder, localWorkspaceFolderBasename): left as written")]
    assert config.errors == ()


def test_environment_container_then_remote_and_null_unsets(tmp_path: Path) -> None:
    config = load(tmp_path, {
        "containerEnv": {"TOOLS": "${localEnv:HOME}/tools", "PATH": "/c:${localEnv:PATH}"},
        "remoteEnv": {"PATH": "${containerEnv:PATH}:/r", "GONE": None,
                      "WS": "${containerWorkspaceFolderBasename}"}})
    container, changes = devcontainer.environment(config, {"HOME": "/h", "PATH": "/bin",
                                                           "GONE": "x"})
    assert container == {"HOME": "/h", "PATH": "/c:/bin", "GONE": "x", "TOOLS": "/h/tools"}
    assert changes == {"TOOLS": "/h/tools", "PATH": "/c:/bin:/r", "GONE": None,
                       "WS": tmp_path.name}
    assert devcontainer.apply({"GONE": "x", "KEEP": "k"}, changes) == {
        "KEEP": "k", "TOOLS": "/h/tools", "PATH": "/c:/bin:/r", "WS": tmp_path.name}
