"""A shell command's simple commands as bash reads them (initd/events/claude/shellwords.py),
by table, and against bash itself: for any line of words the parser reads, each word it
says it knows is the word bash passes (``printf '%s\\0'`` prints them). A word bash reads
otherwise than the grammar is read as no command (None), so that a rule is matched
(fail closed), never a word with a character missing: ``rm -$"rf" x`` once read as
``rm rf x``, past an ``if: "Bash(rm -rf *)"``."""

from __future__ import annotations

import os
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from initd.events.claude import shellwords
from initd.events.claude.wildcards import HOLE
from initd.events.claude.words import literal


def words(command: str) -> list[list[str | None]] | None:
    """Each simple command's words as text (None: a hole), or None."""
    found = shellwords.simple_commands(command)
    return None if found is None else [[literal(w) for w in c] for c in found]


@pytest.mark.parametrize(("command", "read"), [
    ("rm -rf x", [["rm", "-rf", "x"]]),
    ("'r'\"m\" \\-rf x", [["rm", "-rf", "x"]]),
    ("$'\\x72\\155' x", [["rm", "x"]]),
    ("X=1 rm x >/dev/null 2>&1", [["rm", "x"]]),  # assignments and redirections left out
    ("a && (b | c); { d; }", [["a"], ["b"], ["c"], ["d"]]),
    ("echo $(rm x) `ls`", [["echo", None, None], ["rm", "x"], ["ls"]]),
    ("cat <<EOF\n$(rm x)\nEOF", [["cat"], ["rm", "x"]]),
    ("if a; then b; fi; while c; do d; done", [["a"], ["b"], ["c"], ["d"]]),
    ("$CMD x; r* x; rm{,} x", [[None, "x"], [None, "x"], [None, "x"]]),
    ('echo "a $X b"', [["echo", None]]),
    ('echo $"t"', [["echo", "t"]]),  # a translated string: its $ is no text
    ("export A=1; unset B", [["export"], ["unset", "B"]]),  # (A=1: in bound)
])
def test_simple_commands(command: str, read: list[list[str | None]]) -> None:
    assert words(command) == read


@pytest.mark.parametrize("command", [
    'rm -$"rf" x',  # the grammar's "-$" token: its - was lost
    "rm x$",  # a $ at a word's end is text to bash
    "r$$ x",  # $$: the shell's pid
    "echo $ x",
    "rm \\ -rf",  # an escaped blank starting a word: bash's word is " -rf"
    "printf x {\t{-{",  # a blank bash splits at, inside one word of the grammar's
    "echo \\ #; rm -rf x",  # the grammar's comment after an escaped blank: bash runs rm
    "r\\\nm x",  # a backslash-newline inside a word: bash joins it
    "rm (",  # a syntax error
    "! { rm x; }",  # a reserved word read as a command's name
    "x" * (shellwords.COMMAND_LIMIT + 1),
    "a &&" * 300 + " b",  # nested past DEPTH_LIMIT
    "echo \ud800",  # no UTF-8 for a lone surrogate
    "let 'a[$(rm x)]'",  # code in a string bash evaluates
])
def test_what_bash_reads_otherwise_is_none(command: str) -> None:
    assert shellwords.read(command) is None


def test_the_variables_a_command_sets_and_evaluates() -> None:
    found = shellwords.read("X=rm; for Y in a b; do :; done; (( Z = W + 1 )); ${V:=v}")
    assert found is not None
    assert dict(found.bound) == {"X": ("rm",), "Y": ("a b",), "Z": ("0",), "W": ("0",),
                                 "V": ("v",)}
    assert {"Z", "W"} <= found.evaluated


# Pieces of one word (no ; & | < > ( ) newline or backquote: one simple command, and
# nothing run but the builtin printf, with PATH empty, in an empty directory).
PIECES = ["a", "r", "m", "-", "'x y'", "'", '"', "\\", "$", "{", "}", ",", "*", "?", "[",
          "]", ".", "1", " ", "\t", "$'\\x72'", "$'\\101'", "$'\\cA'", "$'\\u00e9'", '"\\$"',
          '"\\\\"', '"a\\\nb"', "$X", "${X}", "=", "#", '$"t"', "%", "@", "^", "\\ ", "é"]


def bash_words(line: str) -> list[str] | None:
    """The words bash passes printf in ``printf '%s\\0' - LINE`` after its ``-``, or None
    when it fails."""
    with tempfile.TemporaryDirectory() as empty:
        out = subprocess.run(["/bin/bash", "-c", f"printf '%s\\0' - {line}"], cwd=empty,
                             capture_output=True, timeout=60,
                             env={"PATH": "", "LANG": "C.UTF-8", "X": "x  y"})
    if out.returncode != 0:
        return None
    return out.stdout.decode().split("\0")[1:-1]


# derandomize: the same lines every run, so a run's verdict is the code's, not its luck
# (a longer hunt with random lines, 4,400 of them, found nothing more)
@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=7).map("".join))
@example('-$"rf"')
@example("x$")
@example("\\ -rf")
@example("{\t{-{")
@example("r$$")
@example("\\ #")
def test_every_word_read_is_the_word_bash_passes(line: str) -> None:
    found = shellwords.simple_commands(f"printf '%s\\0' - {line}")
    if found is None or len(found) != 1 or HOLE in {s for w in found[0] for s in w}:
        return  # not read (the rule matches), or what only the running shell knows
    said = bash_words(line)
    if said is not None:
        assert [literal(w) for w in found[0][3:]] == said, (line, said)


@pytest.mark.skipif(not os.path.exists("/bin/bash"), reason="cannot run here: no bash")
def test_the_oracle_sees_what_bash_passes() -> None:
    assert bash_words("a'b c' $'\\x72m' -$\"rf\"") == ["ab c", "rm", "-rf"]
