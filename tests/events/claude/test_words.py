"""One word of a shell command as bash will have it (initd/events/claude/words.py): quotes,
escapes and ``$'…'`` resolved; what only the running shell knows a hole; which simple
commands have bash evaluate their words as expressions."""

from __future__ import annotations

import pytest
import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from initd.events.claude import words
from initd.events.claude.wildcards import HOLE

PARSER = Parser(Language(tree_sitter_bash.language()))


def argument(source: str) -> tuple[Node, bytes]:
    """The tree-sitter node of the one argument of ``echo SOURCE``."""
    data = f"echo {source}".encode()
    command = PARSER.parse(data).root_node.named_children[0]
    assert command.type == "command", command
    return command.named_children[1], data


@pytest.mark.parametrize(("source", "word"), [
    ("rm", ("rm",)), ("\\rm", ("rm",)), ("r\\m", ("rm",)), ("'rm'", ("rm",)),
    ('"rm"', ("rm",)), ("r''m", ("r", "", "m")), ("$'\\x72m'", ("rm",)),
    ("$'\\162m'", ("rm",)), ("$'\\u0072m'", ("rm",)), ("$'\\U00000072m'", ("rm",)),
    ("$'\\cA'", ("\x01",)), ("$'a\\tb\\n'", ("a\tb\n",)), ("$'\\q'", ("\\q",)),
    ("$'\\xZ'", ("\\xZ",)),  # not an escape bash knows: as written
    ('"a\\$b\\`c\\"d\\\\e\\f"', ('a$b`c"d\\e\\f',)),  # only these five escape in ""
    ('"a\\\nb"', ("ab",)),  # a backslash-newline in "" is nothing
    ("42", ("42",)),
])
def test_a_word_as_bash_has_it(source: str, word: tuple[str, ...]) -> None:
    node, data = argument(source)
    assert words.word(node, data) == word
    assert words.literal(words.word(node, data)) == "".join(word)


@pytest.mark.parametrize("source", [
    "$X", "${X}", "$(rm)", "`rm`", "$((1+2))", "r*", "r?", "/bin/r[m]", "rm{,}",
    "{a..c}", "$X/rm", "<(rm)"])
def test_what_the_shell_computes_is_a_hole(source: str) -> None:
    node, data = argument(source)
    assert words.word(node, data) == (HOLE,)
    assert words.literal((HOLE,)) is None


def test_a_double_quoted_expansion_is_a_hole_between_its_texts() -> None:
    node, data = argument('"a $X b"')
    word = words.word(node, data)
    assert word == ("a ", HOLE, " b")
    assert words.literal(word) is None and words.prefix(word) == "a "


def test_prefix_and_drop() -> None:
    assert words.prefix(("rm", "-rf")) == "rm-rf"
    assert words.prefix(("X=", HOLE, "y")) == "X="
    assert words.drop(("X=", "rm"), 2) == ("", "rm")
    assert words.drop(("X", "=r", HOLE), 2) == ("", "r", HOLE)
    assert words.drop(("ab",), 0) == ("ab",)


@pytest.mark.parametrize(("source", "globbed"), [
    ("*", True), ("a?", True), ("[ab]", True), ("{a,b}", True), ("{1..3}", True),
    ("rm", False), ("[a", False), ("{a}", False), ("a]", False), ("\\*", False),
    ("\\[a]", False), ("{a\\,b}", False), ("-rf", False), ("a.b", False),
])
def test_globbed(source: str, globbed: bool) -> None:
    assert words.globbed(source) is globbed


def w(*texts: str) -> tuple[tuple[str, ...], ...]:
    return tuple((t,) for t in texts)


@pytest.mark.parametrize(("command", "evaluates"), [
    (w("let", "a=1"), True), (w("builtin", "let", "x"), True),
    (w("command", "declare", "-i", "X"), True), (w("local", "-ri", "X"), True),
    (w("typeset", "-a", "X"), False), (w("declare", "X"), False), (w("echo", "let"), False),
    (w("time", "coproc", "let", "x"), True), ((), False), (w("builtin"), False),
])
def test_evaluates(command: tuple[tuple[str, ...], ...], evaluates: bool) -> None:
    assert words.evaluates(command) is evaluates


def test_what_the_grammar_reads_otherwise_is_unread() -> None:
    def unread(line: str) -> bool:
        data = line.encode()
        stack, found = [PARSER.parse(data).root_node], False
        while stack:
            node = stack.pop()
            found |= words.unread(node, data)
            stack += node.children
        return found

    for line in ('rm -$"rf" x', "rm x$", "rm \\ -rf", "r$$ x", "echo $ x"):
        assert unread(line), line
    for line in ('rm $"rf" x', 'rm a$"rf"', "rm -rf x", "rm a\\ b", "rm a \\\n b"):
        assert not unread(line), line
