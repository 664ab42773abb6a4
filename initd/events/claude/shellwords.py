"""The simple commands of a shell command, found by a real parser: every command anywhere
in its tree (a subshell, ``{ …; }``, an ``if``/``while``/``for``/``case`` body, a
function, a pipeline, ``$(…)``, backticks, ``<(…)``, a here-document's substitutions),
each as its words the way the shell reads them (words.py): ``'rm'``, ``"rm"`` and
``\\rm`` are ``rm``; leading assignments and redirections left out; what only the running
shell knows (``$X``, ``$(…)``, a glob, a brace expansion) is a hole (wildcards.HOLE).

Every variable the command sets by the shell's own syntax comes with them (``bound``):
rebinding.py decides which of them change what a name runs.

A command the parser cannot read, or reads differently from bash, is None: its ERROR and
MISSING nodes, more than COMMAND_LIMIT characters, nesting deeper than DEPTH_LIMIT, a
character UTF-8 cannot carry, or a backslash-newline inside a word (bash joins the word,
the grammar splits it). Whoever asks (matchers.py) then treats the rule as matched.

The parser is tree-sitter's bash grammar (``tree-sitter``, ``tree-sitter-bash``: MIT, the
grammar GitHub and editors parse bash with, maintained by the tree-sitter organisation,
with heredocs, ``case``, arrays, ``[[ ]]``, arithmetic and process substitution). bashlex
was the other candidate: pure Python, but GPL-3, which initd's bundle (an MIT program
shipped with its dependencies) could not carry without changing its terms, and it
follows bash 4.3's grammar, with no ``case`` and no arithmetic, last released in 2023.
It is imported here, in the hook service, when a rule is first evaluated; never in PID 1.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import TYPE_CHECKING, NamedTuple

from initd.events.claude.words import QUOTED, Bound, Word, evaluates, literal, text, unread, word

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

COMMAND_LIMIT = 64 * 1024  # characters; Claude Code analyses at most 10,000
DEPTH_LIMIT = 256  # nodes deep: `a && b && …` nests one level per operator
SKIPPED = {"variable_assignment", "file_redirect", "heredoc_redirect", "herestring_redirect",
           "comment"}
CODE = {"command_substitution", "process_substitution", "program"}
# bash's reserved words, which start (or end) a compound command where a command starts
RESERVED = {"{", "}", "if", "then", "else", "elif", "fi", "do", "done", "case", "esac",
            "while", "until", "for", "select", "function", "[["}
_PARSING = threading.Lock()  # one parser, and the service answers in several threads


@functools.lru_cache(maxsize=1)
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


class Reading(NamedTuple):
    """A command as bash reads it: its simple commands' words, in the order they are
    written; every variable it sets by the shell's own syntax (``X=…``, ``a[k]=…``,
    ``for X in``, ``${X:=…}``, arithmetic, ``export``/``unset`` names); and every name
    whose value bash evaluates as an expression (arithmetic, a subscript, ``${!X}``,
    ``${X@P}``, ``[[ X -eq … ]]``, ``let``, ``declare -i``)."""

    commands: tuple[tuple[Word, ...], ...]
    bound: tuple[Bound, ...]
    evaluated: frozenset[str]


def simple_commands(command: str) -> tuple[tuple[Word, ...], ...] | None:
    """Every simple command's words, in the order they are written; None when the
    command cannot be read as bash reads it."""
    found = read(command)
    return None if found is None else found.commands


@functools.lru_cache(maxsize=64)
def read(command: str) -> Reading | None:
    """The command's simple commands, the variables it sets and those it evaluates; None
    when it cannot be read as bash reads it."""
    if len(command) > COMMAND_LIMIT:
        return None
    try:
        data = command.encode()
    except UnicodeEncodeError:  # a lone surrogate: JSON allows "\ud800"
        return None
    with _PARSING:
        root = _parser().parse(data).root_node
    if root.has_error or _glued(data, root):
        return None
    found: list[tuple[int, tuple[Word, ...]]] = []
    bound: list[Bound] = []
    evaluated: set[str] = set()
    stack: list[tuple[Node, int, bool]] = [(root, 0, False)]
    while stack:
        node, depth, evaluating = stack.pop()
        if depth > DEPTH_LIMIT or unread(node, data):
            return None  # (or read as bash does not: a word's text left out)
        if node.type == "command":
            if _reserved(node, data):
                return None  # `! { rm; }` read as a command named {: bash's is a group
            found.append((node.start_byte, _words(node, data, bound)))
        elif node.type == "redirected_statement" and _stray(node) and _owner(node) is None:
            return None  # `{ …; } > f x`: bash refuses the x the grammar takes
        elif node.type in ("declaration_command", "unset_command"):  # export, unset
            keyword: Word = (text(node.children[0], data),)
            found.append((node.start_byte, (keyword, *_words(node, data, bound))))
        elif node.type == "variable_name":
            bound += _bound(node, data)
        if evaluating and _evaluated(node, data, evaluated):
            return None  # 'a[$(rm …)]' where bash evaluates it: code in a string
        stack += [(child, depth + 1, flag)
                  for child, flag in _flags(node, data, found, evaluating)]
    commands = tuple(words for _, words in sorted(found, key=lambda item: item[0]))
    return Reading(commands, tuple(bound), frozenset(evaluated))


REDIRECTS = {"file_redirect", "heredoc_redirect", "herestring_redirect"}
VARIABLE_REDIRECT = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")
ARITHMETIC_TESTS = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"}
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _flags(node: Node, data: bytes, found: list[tuple[int, tuple[Word, ...]]],
           evaluating: bool) -> list[tuple[Node, bool]]:
    """The node's children, each with whether bash evaluates it as an expression, where
    a value (``a[$(…)]``) is code: arithmetic (``for ((…))``'s header, not its body), a
    subscript's index, ``${!X}``, ``${X@P}``, ``${s:X:Y}``'s offsets, ``[[ X -eq Y ]]``,
    the ``-v`` of ``[[ ]]``, ``let`` and ``declare -i``. What a substitution runs is code
    the walk reads, not a value evaluated."""
    if node.type in CODE:
        return [(child, False) for child in node.children]
    if node.type == "array":  # a=([X]=1): the index of each [K]=V
        return [(child, evaluating or (child.type == "concatenation" and bool(
            child.children) and text(child.children[0], data) == "[")) for child in
            node.children]
    if node.type in ("subscript", "c_style_for_statement"):
        kept = node.child_by_field_name("name" if node.type == "subscript" else "body")
        return [(child, evaluating or child != kept) for child in node.children]
    if node.type == "expansion":
        operators = [text(op, data) for op in node.children_by_field_name("operator")]
        if "!" in operators or "P" in operators:
            return [(child, True) for child in node.children]
        if ":" in operators:  # ${s:X:Y}: what follows the first colon
            at = next(i for i, c in enumerate(node.children) if text(c, data) == ":")
            return [(child, evaluating or i > at) for i, child in enumerate(node.children)]
    flag = evaluating or _evaluates(node, data, found)
    return [(child, flag) for child in node.children]


def _evaluates(node: Node, data: bytes, found: list[tuple[int, tuple[Word, ...]]]) -> bool:
    """Whether bash evaluates all under ``node`` as an expression (_flags)."""
    kind = node.type
    if kind == "arithmetic_expansion":
        return True
    if kind == "compound_statement":
        return bool(node.children) and text(node.children[0], data) == "(("
    if kind in ("binary_expression", "unary_expression"):
        operator = node.child_by_field_name("operator")
        return operator is not None and text(operator, data) in ARITHMETIC_TESTS | {"-v"}
    if kind == "command" and found and found[-1][0] == node.start_byte:
        return evaluates(found[-1][1])  # let, or a wrapped declare -i
    if kind == "declaration_command":
        return any(c.type == "word" and text(c, data).startswith("-") and
                   "i" in text(c, data) for c in node.children)
    return False


def _evaluated(node: Node, data: bytes, names: set[str]) -> bool:
    """Adds the names ``node`` makes bash evaluate (``@`` for the positional parameters,
    which a function's caller or ``set --`` sets); True when what bash evaluates is code
    in a string (``$(`` or a backtick) or the output of a command (``$(( $(…) ))``)."""
    if node.type in CODE:
        return True
    if node.type in ("variable_name", "special_variable_name") and \
            (text(node, data).isdigit() or text(node, data) in ("@", "*")):
        names.add("@")
    if node.type in ("variable_name", "word"):
        names.update(IDENTIFIER.findall(text(node, data)))
    if node.type not in ("raw_string", "ansi_c_string", "string", "word"):
        return False
    source = "".join(s for s in word(node, data) if s is not None)
    return "$(" in source or "`" in source


def _bound(node: Node, data: bytes) -> list[Bound]:
    """The variable a ``variable_name`` sets, with its value where the grammar gives it
    (a number for arithmetic, nothing new for ``export X``): none where it is only read
    (``$X``, ``${X:-…}``); any name for ``${!X:=…}``."""
    holder = node.parent
    if holder is not None and holder.type == "subscript":  # a[k]: the array's name
        if holder.child_by_field_name("name") != node:
            return [(text(node, data), ("0",))]  # a name in a subscript: arithmetic
        holder = holder.parent
    if holder is None or holder.type == "simple_expansion":
        return []
    name = text(node, data)
    if holder.type == "expansion":
        operators = {text(op, data) for op in holder.children_by_field_name("operator")}
        if not operators & {"=", ":="}:
            return []
        value = holder.named_children[-1] if len(holder.named_children) > 1 else None
        return [(None if "!" in operators else name,
                 None if value is None or value == node else word(value, data))]
    if holder.type == "variable_assignment":
        value = holder.child_by_field_name("value")
        if value is not None and value.type in ("arithmetic_expansion", "number"):
            return [(name, ("0",))]  # i=$((i + 1)): a number
        return [(name, ("",) if value is None else word(value, data))]
    if holder.type in ("declaration_command", "unset_command"):
        return [(name, ("",))]  # export X, unset X: no value of the line's
    if holder.type == "for_statement":
        known = [literal(word(v, data)) for v in holder.children_by_field_name("value")]
        if not known or None in known:  # for X; (the arguments), for X in $(…)
            return [(name, None)]
        return [(name, (" ".join(str(v) for v in known),))]
    return [(name, ("0",))]  # arithmetic: a number


def _glued(data: bytes, root: Node) -> bool:
    """A backslash-newline between two characters of code: bash removes it before it reads
    words (``r\\<newline>m`` is ``rm``), the grammar splits the word there."""
    for found in re.finditer(rb"(?<!\\)(?:\\\\)*\\\n", data):
        at = found.end() - 2
        node: Node | None = root.descendant_for_byte_range(at, at + 1)
        while node is not None and node.type not in QUOTED | CODE:
            node = node.parent
        if node is not None and node.type in QUOTED:
            continue
        before = data[at - 1:at] if at else b" "
        after = data[at + 2:at + 3] or b" "
        if not before.isspace() and not after.isspace():
            return True
    return False


def _reserved(command: Node, data: bytes) -> bool:
    """Whether the grammar took an unquoted reserved word for a program's name: it read
    a compound command as something else (``! { rm; }``, ``time if …``)."""
    name = command.child_by_field_name("name")
    word = name.named_children[0] if name is not None and name.named_children else None
    return word is not None and word.type == "word" and text(word, data) in RESERVED


def _stray(node: Node) -> list[Node]:
    """The words the grammar files under a redirection that are the command's own:
    ``nohup >log rm x`` runs ``nohup rm x``, where the grammar reads ``>log rm x``."""
    found = []
    for child in node.named_children:
        if child.type == "file_redirect":
            found += child.children_by_field_name("destination")[1:]
        elif child.type == "heredoc_redirect":  # cat <<EOF x: x is cat's
            found += child.children_by_field_name("argument")
    return found


def _owner(statement: Node) -> Node | None:
    """The simple command a redirected statement's redirections belong to (through a
    ``!``), or None for a compound one."""
    body = statement.named_children[0] if statement.named_children else None
    while body is not None and body.type == "negated_command" and body.named_children:
        body = body.named_children[0]
    return body if body is not None and body.type == "command" else None


def _words(node: Node, data: bytes, bound: list[Bound] | None = None) -> tuple[Word, ...]:
    """The command's words. Two parts with nothing between them are one word, as bash
    reads them, even where the grammar makes two (``'r'\\m`` is ``rm``). ``{fd}>x``
    is a redirection that sets fd (added to ``bound``), where the grammar reads a word
    (``X=1 {fd}>x rm -rf y`` runs rm)."""
    parts = [child for child in node.named_children if child.type not in SKIPPED]
    parts += _stray(node)
    redirects = [child for child in node.named_children if child.type in REDIRECTS]
    statement = node.parent
    while statement is not None and statement.type == "negated_command":
        statement = statement.parent
    if statement is not None and statement.type == "redirected_statement" and \
            _owner(statement) == node:
        parts += _stray(statement)
        redirects += [c for c in statement.named_children if c.type in REDIRECTS]
    starts = {redirect.start_byte for redirect in redirects}
    words: list[Word] = []
    end = -1
    for child in sorted(parts, key=lambda part: part.start_byte):
        if child.type == "command_name":
            child = child.named_children[0] if child.named_children else child
        if child.end_byte in starts and VARIABLE_REDIRECT.fullmatch(text(child, data)):
            if bound is not None:
                bound.append((text(child, data)[1:-1], ("0",)))  # a descriptor's number
            continue
        read = word(child, data)
        if child.start_byte == end:
            words[-1] += read
        else:
            words.append(read)
        end = child.end_byte
    return tuple(words)
