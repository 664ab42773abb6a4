"""What the programs a command line names run of their words (initd/events/claude/
programs.py): where a wrapper's options end as getopt reads them, env's ``-S`` in every
spelling getopt_long takes, and the shell code ``watch`` and ``flock -c`` give a shell."""

from __future__ import annotations

import pytest

from initd.events.claude import programs
from initd.events.claude.wildcards import HOLE
from initd.events.claude.words import Unknown


def w(*texts: str | None) -> tuple[tuple[str | None, ...], ...]:
    """Words: a text each, None for a hole."""
    return tuple((HOLE,) if t is None else (t,) for t in texts)


@pytest.mark.parametrize(("program", "args", "at"), [
    ("nohup", w("rm", "-rf"), 0),
    ("timeout", w("-s", "KILL", "5", "rm"), 2),  # then its one operand, 5
    ("timeout", w("--signal", "KILL", "5", "rm"), 2),
    ("timeout", w("--sig", "KILL", "5", "rm"), 2),  # getopt_long's unique prefix
    ("timeout", w("--signal=KILL", "5", "rm"), 1),
    ("timeout", w("-sKILL", "5", "rm"), 1),  # the value in the same word
    ("nice", w("-n", "5", "rm"), 2), ("nice", w("-5", "rm"), 1),
    ("env", w("-i", "A=1", "rm"), 1), ("env", w("-u", "HOME", "--", "rm"), 3),
    ("env", w("-", "rm"), 1),  # env's - is -i
    ("exec", w("-a", "ls", "rm"), 2),
    ("sudo", w("-u", "root", "-E", "rm"), 3),
    ("xargs", w("-0", "-n1", "rm"), 2),
    ("command", w("-p", "rm"), 1),
    ("command", w("-v", "rm"), -1), ("command", w("-V", "rm"), -1),  # a query: runs nothing
    ("nohup", w("--", "-rm"), 1),
    ("nohup", w("-", "rm"), 0),  # a lone - is an operand
])
def test_where_a_wrappers_options_end(program: str, args: tuple[tuple[str | None, ...], ...],
                                      at: int) -> None:
    assert programs.past_options(program, args, 0) == at


@pytest.mark.parametrize(("program", "args"), [
    ("env", w("-S", "rm -rf x")), ("env", w("-iS", "rm")), ("env", w("--split-string=rm")),
    ("env", w("--spl", "rm")),  # a prefix getopt_long takes
    ("nice", w(None, "rm")),  # an option or the command: known when it runs
])
def test_what_only_the_running_shell_knows_is_unknown(
        program: str, args: tuple[tuple[str | None, ...], ...]) -> None:
    with pytest.raises(Unknown):
        programs.past_options(program, args, 0)


@pytest.mark.parametrize(("option", "splits"), [
    ("-S", True), ("-iS", True), ("--split-string", True), ("--split", True),
    ("--s", True), ("--split-string=x", True), ("-i", False), ("--", False),
    ("--unset", False), ("--split-strings", False),
])
def test_envs_split_string(option: str, splits: bool) -> None:
    assert programs.splits(option) is splits


@pytest.mark.parametrize(("word", "takes"), [
    ("-k", 1), ("-kKILL", 0), ("-vk", 1), ("-v", 0), ("--kill-after", 1),
    ("--kill", 1), ("--kill-after=5", 0), ("--foreground", 0),
])
def test_takes_value(word: str, takes: int) -> None:
    assert programs.takes_value(word, "ks", ("--kill-after", "--signal")) == takes


@pytest.mark.parametrize(("program", "args", "code"), [
    ("watch", w("-n", "1", "rm", "-rf", "x"), ["rm -rf x"]),
    ("watch", w("-x", "rm", "x"), []),  # -x: the words are the command itself
    ("watch", w("--exec", "rm"), []), ("watch", w("-xn", "1", "rm"), []),
    ("watch", w("-nx", "1", "rm"), ["1 rm"]),  # -n takes "x": 1 is the command
    ("watch", w(), []),
    ("flock", w("/tmp/l", "-c", "rm -rf x"), ["rm -rf x"]),
    ("flock", w("-w", "5", "/tmp/l", "--command", "rm x"), ["rm x"]),
    ("flock", w("/tmp/l", "rm", "x"), []),  # a wrapper's: runs rm
    ("nohup", w("rm"), []),
])
def test_the_code_watch_and_flock_give_a_shell(
        program: str, args: tuple[tuple[str | None, ...], ...], code: list[str]) -> None:
    assert programs.shell_string(program, args) == code


@pytest.mark.parametrize(("program", "args"), [
    ("watch", w("rm", None)), ("flock", w("/tmp/l", None, "x")),
    ("flock", w("/tmp/l", "-c", None)),
])
def test_code_that_is_computed_is_unknown(program: str,
                                          args: tuple[tuple[str | None, ...], ...]) -> None:
    with pytest.raises(Unknown):
        programs.shell_string(program, args)


def test_every_wrapper_names_its_options_as_getopt_does() -> None:
    for program, (short, long, operands) in programs.WRAPPERS.items():
        assert all(o.startswith("--") for o in long), program
        assert "-" not in short and operands in (0, 1), program
