"""The command-line contract: help, version, errors as one line and exit 125."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from initd import __version__, cli
from initd.commands import options
from initd.errors import UsageError
from tests.support.harness import run

INITD = [sys.executable, "-m", "initd"]


def test_help_exits_0_and_lists_every_option() -> None:
    out = subprocess.run([*INITD, "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for option in ("--workspace", "--user", "--grace", "--remap-exit", "--restart",
                   "--max-restarts", "--env-file", "--verbose", "--log-format", "--version"):
        assert option in out.stdout
    assert "initd [OPTIONS] -- CMD [ARGS...]" in out.stdout


def test_version() -> None:
    out = subprocess.run([*INITD, "--version"], capture_output=True, text=True)
    assert (out.returncode, out.stdout.strip()) == (0, f"initd {__version__}")


@pytest.mark.parametrize(("argv", "message"), [
    (["--bogus", "--", "true"], "unrecognized arguments: --bogus"),
    ([], "no command to run"),
    (["--"], "no command to run"),
    (["--grace", "x", "--", "true"], "--grace: 'x': expected a number of seconds"),
    (["--restart", "maybe", "--", "true"], "expected one of never, on-failure, always"),
    (["--remap-exit", "1-0", "--", "true"], "expected FROM:TO"),
])
def test_bad_command_lines_exit_125_with_one_line(argv: list[str], message: str) -> None:
    out = subprocess.run([*INITD, *argv], capture_output=True, text=True)
    assert out.returncode == 125
    assert message in out.stderr
    assert out.stderr.count("\n") == 1
    assert out.stderr.startswith("initd: ")


def test_bad_environment_value_exits_125() -> None:
    init = run(["--", "true"], env={**os.environ, "INITD_RESTART": "maybe"})
    assert init.code == 125
    assert "INITD_RESTART='maybe'" in init.stderr


def test_command_without_double_dash() -> None:
    assert options.parse(["-v", "sh", "-c", "exit 0"]).command == ["sh", "-c", "exit 0"]


def test_options_after_double_dash_belong_to_cmd() -> None:
    assert options.parse(["--", "ls", "--grace", "1"]).command == ["ls", "--grace", "1"]


def test_parse_error_is_usage_error() -> None:
    with pytest.raises(UsageError):
        options.parse(["--max-restarts", "-1", "--", "true"])


def test_cmd_output_passes_through_untouched() -> None:
    init = run(["-vv", "--", "sh", "-c", "printf 'out\\n'; printf 'err\\n' >&2"])
    assert init.stdout_lines == ["out"]  # initd's own logs never go to stdout
    assert "err" in init.stderr.splitlines()


def test_each_log_line_is_one_write() -> None:
    """CMD shares initd's stderr: a log line written in two pieces (print() writes the text
    and then its newline when PYTHONUNBUFFERED=1) lets CMD's output land inside it."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    out = subprocess.run(["strace", "-f", "-qq", "-e", "trace=write", "-e", "signal=none",
                          "-s", "4096", *INITD, "-vv", "--log-format", "json", "--",
                          "/nonexistent"], capture_output=True, text=True, env=env)
    writes = [line for line in out.stderr.splitlines() if "write(2, " in line]
    assert len(writes) >= 5, out.stderr  # pid1's, the supervisor's and the error line
    for call in writes:
        assert '\\n", ' in call, f"a log line written in pieces: {call}"


def test_verbose_logs_phases_as_json_with_duration() -> None:
    import json

    init = run(["-v", "--log-format", "json", "--", "true"])
    events = [json.loads(line) for line in init.stderr.splitlines()]
    for phase in ("settings", "agent start"):
        found = [e for e in events if e["event"] == phase]
        assert found and isinstance(found[0]["duration_ms"], float), events


def test_cwd_of_cmd_is_invokers_and_pid1s_is_root(tmp_path) -> None:
    init = run(["--", "sh", "-c", "pwd; readlink /proc/1/cwd"], cwd=str(tmp_path))
    assert init.stdout_lines == [str(tmp_path), "/"]


def test_pid1_imports_no_third_party_module_and_no_argparse() -> None:
    """PID 1 lives as long as the container: only small standard-library pieces."""
    code = ("import sys, initd.cli; heavy = {'yaml', 'structlog', 'psutil', 'dotenv', "
            "'argparse', 'dataclasses', 'initd.config.settings', 'initd.supervisor.boot'}; "
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([*INITD[:1], "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("argv", "env", "verbose", "json_lines"), [
    ([], {}, 0, None),
    (["-v", "--", "x", "-vv"], {}, 1, None),  # what follows -- belongs to CMD
    (["-vv", "--verbose"], {}, 3, None),
    ([], {"INITD_VERBOSE": "2", "INITD_LOG_FORMAT": "json"}, 2, True),
    (["--log-format", "console"], {"INITD_LOG_FORMAT": "json"}, 0, False),
    (["--log-format=json"], {}, 0, True),
])
def test_pid1_glances_at_its_verbosity(argv: list[str], env: dict[str, str], verbose: int,
                                      json_lines: bool | None) -> None:
    log = cli.pid1_log(argv, env)
    assert log.verbose == verbose
    if json_lines is not None:
        assert log.json_lines is json_lines


def test_help_lists_the_verbs() -> None:
    out = subprocess.run([sys.executable, "-m", "initd", "--help"], capture_output=True,
                         text=True, check=True).stdout
    for verb in ("hooks list", "precommit install", "status | health | ready", "turn",
                 "emit EVENT", "sessions | config", "service"):
        assert verb in out, verb


def test_every_verb_has_its_module_and_a_probe_imports_only_its_own() -> None:
    """An exec probe is started every few seconds in every pod: `initd ready` imports
    the control API's client (through commands/probe.py: tests/commands/test_probe.py),
    never the hooks, the events or the other verbs."""
    import importlib

    from initd import VERBS

    for verb, (module, function) in VERBS.items():
        assert callable(getattr(importlib.import_module(f"initd.commands.{module}"),
                                function)), verb
    probe = ("import sys; from initd import cli\n"
             "code = cli.main(['ready', '--socket', '/nonexistent/initd.sock'])\n"
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('initd'))))\n"
             "print(code, 'http.client' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=30)
    modules, result = out.stdout.splitlines()
    assert result == "125 False", out.stderr  # no service there: one line; no http.client
    ours = modules.split()
    assert not [name for name in ours if name.startswith(("initd.hooks", "initd.events",
                                                          "initd.supervisor"))], ours
    assert [name for name in ours if name.startswith("initd.commands.")] == \
        ["initd.commands.client", "initd.commands.probe"], ours  # (the socket's client)


def test_a_reader_that_closes_early_gets_no_traceback() -> None:
    """``initd shim claude | head -1``: the reader closing the pipe is no error of initd's
    to show (exit 128 + SIGPIPE, as a program killed by it; nothing on stderr)."""
    read, write = os.pipe()
    os.close(read)  # (closed before it starts: its first write meets a closed pipe)
    try:
        done = subprocess.run([sys.executable, "-m", "initd", "shim", "claude"], stdout=write,
                              stderr=subprocess.PIPE, timeout=60)
    finally:
        os.close(write)
    assert done.returncode == 141 and done.stderr == b"", done.stderr
