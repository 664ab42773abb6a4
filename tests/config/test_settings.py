"""flags > environment > config file > defaults; every bad value names where it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from initd.commands import options
from initd.config import settings
from initd.config.values import Restart
from initd.errors import InitdError


def load(argv: list[str], env: dict[str, str] | None = None,
         config: str | None = None, tmp_path: Path | None = None) -> settings.Settings:
    environ = dict(env or {})
    if config is not None:
        assert tmp_path is not None
        path = tmp_path / "initd.yaml"
        path.write_text(config)
        environ["INITD_CONFIG"] = str(path)
    return settings.load(options.parse([*argv, "--", "true"]), environ)


def test_defaults() -> None:
    s = load([], {})
    assert (s.grace, s.restart, s.max_restarts, s.restart_window) == (8.0, Restart.NEVER, 5, 60.0)
    assert (s.user, s.remap_exit, s.env_file, s.verbose) == (None, (), (), 0)
    assert s.command == ("true",)


@pytest.mark.parametrize(("argv", "env", "config", "expected"), [
    ([], {}, "grace: 3", 3.0),
    ([], {"INITD_GRACE": "2"}, "grace: 3", 2.0),
    (["--grace", "1"], {"INITD_GRACE": "2"}, "grace: 3", 1.0),
    ([], {"INITD_GRACE": ""}, "grace: 3", 3.0),  # an empty variable counts as unset
])
def test_precedence(tmp_path: Path, argv: list[str], env: dict[str, str], config: str,
                    expected: float) -> None:
    assert load(argv, env, config, tmp_path).grace == expected


@pytest.mark.parametrize(("env", "expected"), [
    ({"AGENT_USER": "bob"}, "bob"),
    ({"INITD_USER": "alice", "AGENT_USER": "bob"}, "alice"),
])
def test_discobot_aliases(env: dict[str, str], expected: str) -> None:
    assert load([], env).user == expected


def test_workspace_alias() -> None:
    assert load([], {"WORKSPACE_PATH": "/ws"}).workspace == "/ws"


def test_every_option_has_an_environment_variable() -> None:
    env = {"INITD_WORKSPACE": "/w", "INITD_USER": "u", "INITD_GRACE": "1.5",
           "INITD_REMAP_EXIT": "143:0", "INITD_RESTART": "always", "INITD_MAX_RESTARTS": "2",
           "INITD_RESTART_WINDOW": "9", "INITD_VERBOSE": "2", "INITD_LOG_FORMAT": "json"}
    s = load([], env)
    assert (s.workspace, s.user, s.grace, s.remap_exit, s.restart, s.max_restarts,
            s.restart_window, s.verbose, s.log_format) == (
        "/w", "u", 1.5, ((143, 0),), Restart.ALWAYS, 2, 9.0, 2, "json")


def test_config_file_values_and_forms(tmp_path: Path) -> None:
    a, b = tmp_path / "a.env", tmp_path / "b.env"
    a.write_text("A=1\n")
    b.write_text("B=2\n")
    s = load([], {}, f"remap-exit: {{143: 0}}\nrestart: on-failure\nenv_file: [{a}, {b}]\n",
             tmp_path)
    assert s.remap_exit == ((143, 0),)
    assert s.restart is Restart.ON_FAILURE
    assert s.env_file == (str(a), str(b))


@pytest.mark.parametrize(("env", "config", "message"), [
    ({"INITD_GRACE": "soon"}, None, "environment variable INITD_GRACE='soon': expected a number"),
    ({"INITD_GRACE": "-1"}, None, "INITD_GRACE='-1': expected a number of seconds >= 0"),
    ({"INITD_RESTART": "sometimes"}, None, "expected one of never, on-failure, always"),
    ({"INITD_REMAP_EXIT": "143"}, None, "expected FROM:TO"),
    ({"INITD_REMAP_EXIT": "300:0"}, None, "exit codes 0-255"),
    ({}, "grace: soon\n", "initd.yaml: key 'grace': expected a number"),
    ({}, "- a list\n", "initd.yaml: expected a mapping"),
    ({}, "grace: [1\n", "initd.yaml:2:1: invalid YAML"),
])
def test_bad_values_name_their_source(tmp_path: Path, env: dict[str, str], config: str | None,
                                      message: str) -> None:
    with pytest.raises(InitdError) as err:
        load([], env, config, tmp_path if config else None)
    assert message in str(err.value)


def test_unknown_config_key_is_a_warning(tmp_path: Path) -> None:
    s = load([], {}, "grace: 2\nshinyness: 11\n", tmp_path)
    assert s.grace == 2.0
    assert any("unknown key 'shinyness'" in w for w in s.warnings)


def test_a_yaml_error_in_the_config_is_one_line_file_line_column(tmp_path: Path) -> None:
    """It was PyYAML's 8-line dump of marks and carets."""
    with pytest.raises(InitdError) as caught:
        load([], {}, "grace: [1\nuser: x\n", tmp_path)
    message = str(caught.value)
    assert message == f"{tmp_path / 'initd.yaml'}:2:5: invalid YAML: expected ',' or ']', " \
                      "but got ':'"


def test_explicit_missing_config_is_an_error() -> None:
    with pytest.raises(InitdError, match=r"config file /nope\.yaml: not found"):
        load([], {"INITD_CONFIG": "/nope.yaml"})


def test_env_files_never_override_the_real_environment(tmp_path: Path) -> None:
    env_file = tmp_path / "agent.env"
    env_file.write_text("FROM_FILE=file\nSHARED=file\nINITD_GRACE=4\n# comment\n")
    environ = {"SHARED": "real"}
    s = settings.load(options.parse(["--env-file", str(env_file), "--", "true"]), environ)
    assert environ["FROM_FILE"] == "file"
    assert environ["SHARED"] == "real"
    assert s.grace == 4.0  # env files may carry INITD_* settings too


def test_missing_env_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InitdError, match=r"env file .*missing\.env: not found"):
        settings.load(options.parse(["--env-file", str(tmp_path / "missing.env"), "--", "x"]), {})
