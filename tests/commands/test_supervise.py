"""The main command's common lines, ``initd [--user NAME] [--] CMD [ARGS...]``, are read by
hand (no argparse: ~6 ms of CPU of every such boot). What it makes of a line must be what the
parser makes of it, for every line it takes; every other line goes to the parser."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from initd.commands import options, supervise
from tests.support import imports

WORDS = st.sampled_from(["--", "-v", "--help", "-", "true", "sh", "-c", "x y", "--grace",
                         "=", "--workspace=/w", "hooks", "é", "", "--user", "agent",
                         "--user=agent", "--user=", "--user=-x", "--us"])


@given(st.lists(WORDS, max_size=6))
def test_a_line_read_by_hand_is_what_the_parser_makes_of_it(argv: list[str]) -> None:
    mine = supervise.plain(argv)
    if mine is not None:
        assert vars(mine) == vars(options.parse(argv))


def test_the_lines_it_takes_and_leaves() -> None:
    assert supervise.plain(["true"]).command == ["true"]
    assert supervise.plain(["--", "-v"]).command == ["-v"]  # after --, CMD's own
    assert supervise.plain(["sh", "-c", "exit 3"]).command == ["sh", "-c", "exit 3"]
    assert vars(supervise.plain(["--user", "agent", "--", "api"])) == {
        **dict.fromkeys(supervise.OPTIONS), "user": "agent", "command": ["api"]}
    for argv in ([], ["--"], ["-v", "--", "true"], ["--help"], ["--grace", "3", "true"],
                 ["--user", "-x", "true"], ["--user", "a", "--user", "b", "true"]):
        assert supervise.plain(argv) is None, argv  # the parser says what is wrong


def test_it_knows_every_option_the_parser_has() -> None:
    assert set(vars(options.parse(["--", "true"]))) == {*supervise.OPTIONS, "command"}


# What a plain start does without: each is a millisecond or more of CPU of every
# container's start (bench/README.md, row 31). (signal, which PID 1 needs, brings enum,
# functools and collections; subprocess, which starts the agent, brings re, locale and
# selectors; the supervisor's records, typing: those are there.)
NOT_ON_A_PLAIN_START = {"argparse", "initd.commands.options", "socket", "json", "structlog",
                        "yaml", "initd.hooks.discovery", "initd.events.engine",
                        # /metrics' library, and PID 1's page for it (no probe port here)
                        "prometheus_client", "mmap", "initd.pid1.reaped"}


def test_a_plain_boot_imports_neither_argparse_nor_a_workspaces_modules(
        tmp_path: Path) -> None:
    imported = imports.imported("--", "true", cwd=tmp_path)
    assert "initd.supervisor.boot" in imported
    assert imported & NOT_ON_A_PLAIN_START == set()
