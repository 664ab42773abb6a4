"""``initd svlog`` (initd/commands/svlog.py): the hidden verb a service's logger runs as,
its command line read by hand, strictly (root writes it; anything else is a clear error),
and the process it makes importing no more than it needs for its whole life."""

from __future__ import annotations

import subprocess
import sys

import pytest

from initd import VERBS
from initd.commands import svlog
from initd.errors import InitdError


def test_it_is_a_verb() -> None:
    assert VERBS["svlog"] == ("svlog", "main")


def test_the_options_as_root_writes_them() -> None:
    options, json_lines = svlog.parse(["--name", "web", "--dir", "/var/log/initd/web",
                                       "--max-bytes", "1048576", "--backups", "3", "--json"])
    assert options == {"--name": "web", "--dir": "/var/log/initd/web",
                       "--max-bytes": "1048576", "--backups": "3"}
    assert json_lines


@pytest.mark.parametrize(("argv", "said"), [
    (["--name", "web", "--max-bytes", "1"], "--backups missing"),
    (["--name", "web", "--name", "x", "--max-bytes", "1", "--backups", "0"], "unexpected"),
    (["--name", "web", "--max-bytes", "1", "--backups", "0", "--other"], "unexpected"),
    (["--name"], "unexpected"),
])
def test_anything_else_is_a_clear_error(argv: list[str], said: str) -> None:
    with pytest.raises(InitdError, match=said):
        svlog.parse(argv)


@pytest.mark.parametrize(("name", "value"), [("--max-bytes", "0"), ("--backups", "-1"),
                                             ("--max-bytes", "1e6")])
def test_a_count_is_a_whole_number(name: str, value: str) -> None:
    argv = {"--name": "web", "--max-bytes": "10", "--backups": "1", name: value}
    with pytest.raises(InitdError, match=f"{name}: expected a whole number"):
        svlog.main([item for pair in argv.items() for item in pair])


def test_the_logger_imports_little() -> None:
    """It lives as long as initd, one a service: no argparse, structlog, logging or
    subprocess, and nothing of the tiers above the system's."""
    probe = ("import sys\nfrom initd import cli\n"
             "code = cli.main(['svlog', '--name', 'x', '--max-bytes', '9', '--backups', '0'])\n"
             "print(' '.join(sorted(sys.modules)), code)")
    out = subprocess.run([sys.executable, "-I", "-c", probe], input=b"", capture_output=True,
                         timeout=30, check=True)
    *modules, code = out.stdout.decode().split()
    assert code == "0"
    assert not {"argparse", "structlog", "subprocess", "logging"} & set(modules)
    assert [m for m in modules if m.startswith("initd.")] == [
        "initd.cli", "initd.commands", "initd.commands.svlog", "initd.errors", "initd.pid1",
        "initd.pid1.log", "initd.process", "initd.process.output", "initd.process.svfiles",
        "initd.process.svlog"]
