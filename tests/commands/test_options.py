"""The main command line (initd/commands/options.py): each option typed by its value's
parser, a bad value a usage error that keeps the parser's explanation, CMD after ``--``,
and the options the verbs share. What settings make of it: tests/config/test_settings.py;
the verbs' own lines: tests/test_cli.py."""

from __future__ import annotations

import argparse
import signal

import pytest

from initd.commands import options
from initd.config.values import Restart
from initd.errors import UsageError


def test_a_whole_line() -> None:
    args = options.parse(["--user", "agent", "--grace", "2.5", "--stop-signal", "INT",
                          "--remap-exit", "143:0", "--remap-exit", "1:0", "--restart",
                          "on-failure", "--secret", "A", "--secret", "B", "--no-service",
                          "--trust", "-vv", "--", "agent", "--flag"])
    assert (args.user, args.grace, args.stop_signal) == ("agent", 2.5, signal.SIGINT)
    assert args.remap_exit == ((143, 0), (1, 0)) and args.restart is Restart.ON_FAILURE
    assert (args.secret, args.service, args.trust, args.verbose) == (("A", "B"), False,
                                                                    True, 2)
    assert args.command == ["agent", "--flag"]
    assert options.parse(["true"]).command == ["true"]  # (the -- is optional)


@pytest.mark.parametrize(("argv", "said"), [
    (["--grace", "soon", "--", "true"], "'soon': expected a number of seconds"),
    (["--stop-signal", "KILL", "--", "true"], "'KILL': expected a signal initd forwards"),
    (["--session-id", "../x", "--", "true"], "'../x': expected a session id"),
    (["--ready-port", "0", "--", "true"], "'0': expected a TCP port number"),
    (["--bogus", "--", "true"], "unrecognized arguments: --bogus"),
    ([], "no command to run"), (["--"], "no command to run"),
])
def test_a_bad_line_is_a_usage_error_saying_why(argv: list[str], said: str) -> None:
    with pytest.raises(UsageError) as raised:
        options.parse(argv)
    assert said in str(raised.value)
    assert str(raised.value).endswith("(see initd --help)") or "no command" in said


def test_the_shared_options() -> None:
    p = options.Parser(prog="initd x")
    options.socket_option(p)
    options.workspace_option(p)
    options.timeout_option(p, 5.0)
    args = p.parse_args(["--socket", "/s", "--timeout", "0.5"])
    assert (args.socket, args.workspace, args.timeout) == ("/s", None, 0.5)
    assert p.parse_args([]).timeout == 5.0
    for bad in ("0", "-1", "x"):
        with pytest.raises(UsageError):
            p.parse_args(["--timeout", bad])


def test_typed_keeps_the_explanation() -> None:
    def strict(text: str) -> int:
        raise ValueError("expected something else")

    with pytest.raises(argparse.ArgumentTypeError, match="'x': expected something else"):
        options.typed(strict)("x")


def test_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    options.table([["ID", "TYPE", "PATH"], ["a-long-id", "file", "/ws/x y.sh"]])
    assert capsys.readouterr().out == ("ID         TYPE  PATH\n"
                                       "a-long-id  file  /ws/x y.sh\n")
