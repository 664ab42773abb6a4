"""Whether a command line can change what a name in it runs (initd/events/claude/
rebinding.py): each builtin inert, unknown or setting names; an assignment to what bash
looks names up with; a value bash evaluates that can carry a command. The attacks, each
run first by bash as the agent, are in tests/security/test_rule_rebinding.py."""

from __future__ import annotations

import pytest

from initd.events.claude import rebinding
from initd.events.claude.wildcards import HOLE
from initd.events.claude.words import Unknown


def w(*texts: str | None) -> tuple[tuple[str | None, ...], ...]:
    return tuple((HOLE,) if t is None else (t,) for t in texts)


@pytest.mark.parametrize(("program", "args", "sets"), [
    ("echo", w("x"), []), ("cd", w("/"), []), ("ls", w("-la"), []),  # a program: nothing
    ("builtin", w("rm"), []),  # a wrapper: wrappers.py unwraps it
    ("export", w("A=1", "B"), [("A", ("1",)), ("B", ("",))]),
    ("declare", w("-r", "X=y"), [("X", ("y",))]),
    ("local", w("OPTIND"), [("OPTIND", ("",))]),
    ("read", w("-r", "A", "B"), [("A", None), ("B", None)]), ("read", w(), [("REPLY", None)]),
    ("read", w("-a", "ARR"), [("ARR", None), ("REPLY", None)]),
    ("printf", w("-v", "V", "%s", "x"), [("V", None)]),
    ("mapfile", w("LINES"), [("LINES", None)]), ("readarray", w(), [("MAPFILE", None)]),
    ("getopts", w("ab", "OPT"), [("OPT", None)]),
    ("unset", w("X"), [("X", ("",))]), ("unset", w("-f", "ls"), []),
    ("let", w("i=j+1"), [("i", ("0",)), ("j", ("0",))]),
    ("set", w("-e", "-o", "pipefail"), []), ("set", w("--", "a"), []),
    ("shopt", w("-s", "nullglob"), []), ("hash", w("-t", "ls"), []),
    ("alias", w("ll"), []), ("trap", w("-", "EXIT"), []), ("trap", w("", "INT"), []),
    ("test", w("-v", "a[1]"), []), ("[", w("-f", "x", "]"), []),
])
def test_what_a_builtin_sets(program: str, args: tuple[tuple[str | None, ...], ...],
                             sets: list[tuple[str | None, tuple[str, ...] | None]]) -> None:
    assert rebinding.check(program, args) == sets


@pytest.mark.parametrize(("program", "args"), [
    ("eval", w("x")), ("source", w("f")), (".", w("f")), ("enable", w("-n", "echo")),
    ("unalias", w("ls")), ("declare", w("-n", "ref=PATH")), ("unset", w("-n", "r")),
    ("mapfile", w("-C", "rm x", "-c", "1")), ("set", w("-o", "posix")), ("set", w("-H")),
    ("set", w("-k")), ("set", w("-o", None)), ("shopt", w("-s", "expand_aliases")),
    ("shopt", w("-s", None)), ("hash", w("-p", "/bin/rm", "ls")), ("hash", w("-r")),
    ("alias", w("ls=rm -rf")), ("trap", w("rm x", "EXIT")),
    ("test", w("-v", "a[$(rm x)]")), ("printf", w("-v", "a[$(rm x)]", "x")),
    ("read", w(None)), ("declare", w("a[i]=1")),
])
def test_what_changes_what_a_name_runs_or_runs_code_is_unknown(
        program: str, args: tuple[tuple[str | None, ...], ...]) -> None:
    with pytest.raises(Unknown):
        rebinding.check(program, args)


@pytest.mark.parametrize(("name", "value"), [
    ("PATH", ("/tmp",)), ("BASH_CMDS", ("x",)), ("BASH_ALIASES", ("x",)), ("BASH_ENV", ("f",)),
    ("PROMPT_COMMAND", ("rm",)), ("PS4", ("$(rm)",)), ("BASH_FUNC_ls%%", ("() { rm; }",)),
    (None, ("x",)),  # any name (${!X:=…})
])
def test_setting_what_bash_looks_names_up_with_is_unknown(
        name: str | None, value: tuple[str, ...]) -> None:
    with pytest.raises(Unknown):
        rebinding.binding(name, value)


def test_a_variable_another_program_runs_is_its_code() -> None:
    assert rebinding.binding("GIT_PAGER", ("rm -rf x",)) == "rm -rf x"
    assert rebinding.binding("X", ("rm",)) is None


@pytest.mark.parametrize(("bound", "evaluated", "tainted"), [
    ([("X", ("a[$(rm x)]",))], frozenset({"X"}), True),
    ([("X", ("Y",)), ("Y", ("a[`rm`]",))], frozenset({"X"}), True),  # named by one
    ([("X", None)], frozenset({"X"}), True),  # known only when it runs
    ([("OPTIND", ("a[$(rm)]",))], frozenset(), True),  # bash's own integers
    ([("X", ("a[$(rm x)]",))], frozenset(), False),  # never evaluated
    ([("X", ("1",))], frozenset({"X"}), False),
    ([], frozenset({"@"}), True),  # $1, set by a caller
])
def test_tainted(bound: list[tuple[str, tuple[str, ...] | None]],
                 evaluated: frozenset[str], tainted: bool) -> None:
    assert rebinding.tainted(bound, evaluated) is tainted  # type: ignore[arg-type]


@pytest.mark.parametrize(("word", "bound"), [
    (("x",), ("x", None)), (("x=v",), ("x", ("v",))), (("x+=v",), ("x", ("v",))),
    (("a[1]=v",), ("a", ("v",))), (("a[@]",), ("a", None)), ((HOLE,), (None, None)),
    (("x=", HOLE), ("x", ("", HOLE))),
])
def test_assignment(word: tuple[str | None, ...],
                    bound: tuple[str | None, tuple[str | None, ...] | None]) -> None:
    assert rebinding.assignment(word) == bound
