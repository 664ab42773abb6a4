"""The texts a Bash rule is tested on for a command (initd/events/claude/wrappers.py):
each simple command, the program without its directory, what each wrapper in front of it
runs, the code in strings git runs, ``find -exec``; None (the rule matches) for what runs
only the shell knows when it runs it."""

from __future__ import annotations

import pytest

from initd.events.claude import wrappers
from initd.events.claude.wildcards import HOLE


def texts(command: str) -> list[str] | None:
    found = wrappers.candidates(command)
    return None if found is None else ["".join("?" if s is HOLE else s for s in t)
                                       for t in found]  # (? : a hole)


@pytest.mark.parametrize(("command", "tested"), [
    ("rm -rf x", ["rm -rf x"]),
    ("/bin/rm -rf x", ["/bin/rm -rf x", "rm -rf x"]),
    ("timeout -s KILL 5 rm x", ["timeout -s KILL 5 rm x", "rm x"]),
    ("nice -n 5 nohup rm x", ["nice -n 5 nohup rm x", "nohup rm x", "rm x"]),
    ("env -i A=1 rm x", ["env -i A=1 rm x", "rm x"]),
    ("sudo -u root rm x", ["sudo -u root rm x", "rm x"]),
    ("exec -a ls rm x", ["exec -a ls rm x", "ls x", "rm x"]),  # busybox reads its name
    ("command -v rm", ["command -v rm"]),  # a query: runs nothing
    ("find . -exec rm {} \\;", ["find . -exec rm {} ;", "rm {}"]),
    ("/usr/lib/git-core/git-push -f", ["/usr/lib/git-core/git-push -f", "git-push -f",
                                       "git push -f"]),
    ("watch -n 1 rm x", ["watch -n 1 rm x", "rm x ?", "rm x", "rm x"]),  # ? : git's "$@"
    ("GIT_PAGER=less git log", ["git log", "less ?", "less"]),
    ("a; b | c", ["a", "b", "c"]),
    ('"$HOME"/bin/rm x', ["rm x"]),  # its directory known only when it runs
])
def test_the_texts_of_a_command(command: str, tested: list[str]) -> None:
    assert texts(command) == tested


@pytest.mark.parametrize("command", [
    "$CMD x", "$(echo rm) x", "r* x", "$X/rm x",  # a program the shell computes
    "eval 'rm x'", "bash -c 'rm x'", "sh -s", "echo rm | bash", "bash", "su -c 'rm x'",
    "env -S 'rm x'", "alias r='rm'", "trap 'rm x' EXIT", "hash -p /bin/rm ls; ls",
    "PATH=/tmp:$PATH ls", "source ./x", "unshare -r",  # a shell on standard input
    "nice $OPTS rm x", "env $X rm x",
    "time " * (wrappers.WRAP_LIMIT + 1) + "rm",
    "git -c core.pager=$(rm) log",
])
def test_what_only_the_shell_knows_when_it_runs_matches(command: str) -> None:
    assert wrappers.candidates(command) is None


def test_code_in_strings_is_read_only_so_deep() -> None:
    line = "rm x"
    for _ in range(wrappers.CODE_LIMIT + 2):
        line = f"git -c core.pager={line!r} log"
    assert wrappers.candidates(line) is None
    assert texts("git -c core.pager='git -c core.pager=rm log' log") is not None


def test_a_script_a_command_runs_is_named_not_read() -> None:
    assert texts("bash build.sh") == ["bash build.sh"]
    assert texts("bash -e build.sh") == ["bash -e build.sh"]
