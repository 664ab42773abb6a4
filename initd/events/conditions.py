"""``when:`` conditions: a small expression language, parsed once and evaluated safely.

Never ``eval``, never a shell: text is parsed into a tree at load time (a bad expression
is an error naming the file and key), and the tree is evaluated over typed values.

    expr   := or                     literals: 10, 2.5, 'text', "text", true, false, null
    or     := and ("||" and)*        variables: ${NAME}: the event's value, typed as JSON
    and    := eq ("&&" eq)*          gives it (a text that reads as a number is a number,
    eq     := rel (("=="|"!=") rel)*   as the environment's "10" is)
    rel    := add (("<"|">"|"<="|">=") add)*
    add    := mul (("+"|"-") mul)*   + adds numbers or joins texts; - * / % take numbers
    mul    := unary (("*"|"/"|"%") unary)*
    unary  := ("!"|"-") unary | atom     ! && || and the result go by truthiness: false,
    atom   := literal | variable | "(" expr ")"   0, "" and null are false

Comparing a number with a text, or dividing by zero, is an error at evaluation, reported
by the caller; a missing variable is null.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, NamedTuple

MAX_LENGTH = 2000
MAX_TOKENS = 256  # so no tree is deeper than that: evaluation recurses safely
MAX_DEPTH = 50  # parentheses and ! within one another
Lookup = Callable[[str], Any]


class ConditionError(ValueError):
    """A condition that cannot be parsed, or cannot be evaluated with these values."""


class Token(NamedTuple):
    kind: str  # num str var word op ( ) end
    text: str
    value: Any
    at: int


TOKEN = re.compile(r"""
    \s*(?:
      (?P<num>\d+(?:\.\d+)?)
    | (?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    | (?P<var>\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)\})
    | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>==|!=|<=|>=|&&|\|\||[<>+\-*/%!()])
    )""", re.VERBOSE)


def tokens(text: str) -> list[Token]:
    found, at = [], 0
    while at < len(text):
        if text[at:].isspace():
            break
        match = TOKEN.match(text, at)
        if match is None or match.end() == at:
            rest = text[at:].lstrip()
            column = len(text) - len(rest) + 1
            raise ConditionError(f"unexpected {rest[:10]!r} at column {column}")
        kind = match.lastgroup if match.lastgroup != "name" else "var"
        raw = match.group(kind or "op")
        if kind == "num":
            value: Any = float(raw) if "." in raw else int(raw)
        elif kind == "str":
            value = _unquote(raw)
        elif kind == "var":
            value = match.group("name")
        else:
            value = raw
        if kind == "op" and raw in "()":
            kind = raw
        found.append(Token(kind or "op", raw, value, match.start()))
        at = match.end()
    if len(found) > MAX_TOKENS:
        raise ConditionError(f"more than {MAX_TOKENS} terms and operators")
    found.append(Token("end", "", None, len(text)))
    return found


def _unquote(raw: str) -> str:
    body = raw[1:-1]
    return re.sub(r"\\(.)", r"\1", body)


# --- the tree: ("lit", value) | ("var", name) | ("not"|"neg", node) | (op, left, right)
Node = tuple[Any, ...]


class Condition(NamedTuple):
    text: str
    tree: Node

    def __call__(self, lookup: Lookup) -> bool:
        return truthy(evaluate(self.tree, lookup))


def parse(text: object) -> Condition:
    if not isinstance(text, str):
        raise ConditionError(f"expected a condition as text, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ConditionError(f"longer than {MAX_LENGTH} characters")
    parser = _Parser(tokens(text))
    tree = parser.expr(0)
    if parser.peek().kind != "end":
        raise ConditionError(f"unexpected {parser.peek().text!r} at column "
                             f"{parser.peek().at + 1}")
    return Condition(text, tree)


class _Parser:
    LEVELS: tuple[tuple[str, ...], ...] = (("||",), ("&&",), ("==", "!="),
                                           ("<", ">", "<=", ">="), ("+", "-"),
                                           ("*", "/", "%"))

    def __init__(self, toks: list[Token]) -> None:
        self.toks = toks
        self.pos = 0

    def peek(self) -> Token:
        return self.toks[self.pos]

    def take(self) -> Token:
        token = self.toks[self.pos]
        self.pos += 1
        return token

    def expr(self, depth: int) -> Node:
        return self.binary(0, depth)

    def binary(self, level: int, depth: int) -> Node:
        if level == len(self.LEVELS):
            return self.unary(depth)
        left = self.binary(level + 1, depth)
        while self.peek().kind == "op" and self.peek().text in self.LEVELS[level]:
            op = self.take().text
            left = (op, left, self.binary(level + 1, depth))
        return left

    def unary(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise ConditionError(f"nested more than {MAX_DEPTH} deep")
        token = self.peek()
        if token.kind == "op" and token.text in ("!", "-"):
            self.take()
            return ("not" if token.text == "!" else "neg", self.unary(depth + 1))
        return self.atom(depth)

    def atom(self, depth: int) -> Node:
        token = self.take()
        if token.kind in ("num", "str"):
            return ("lit", token.value)
        if token.kind == "var":
            return ("var", token.value)
        if token.kind == "word":
            words = {"true": True, "false": False, "null": None}
            if token.text in words:
                return ("lit", words[token.text])
            raise ConditionError(f"unknown word {token.text!r} at column {token.at + 1} "
                                 "(a variable is written ${NAME}, a text in quotes)")
        if token.kind == "(":
            inner = self.expr(depth + 1)
            if self.take().kind != ")":
                raise ConditionError(f"missing ')' for the '(' at column {token.at + 1}")
            return inner
        where = "the end" if token.kind == "end" else f"{token.text!r} at column {token.at + 1}"
        raise ConditionError(f"expected a value, found {where}")


# --- evaluation


def typed(value: Any) -> Any:
    """A variable's value as a condition sees it: JSON types kept; a text that reads as a
    number (the environment's "10") is that number."""
    if isinstance(value, str) and re.fullmatch(r"-?\d+(\.\d+)?", value.strip()):
        return json.loads(value.strip())
    return value


def truthy(value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    if _number(value):
        return bool(value != 0)
    if isinstance(value, str | list | dict):
        return len(value) > 0
    return True


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def evaluate(node: Node, lookup: Lookup) -> Any:
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "var":
        return typed(lookup(node[1]))
    if kind == "not":
        return not truthy(evaluate(node[1], lookup))
    if kind == "neg":
        value = evaluate(node[1], lookup)
        if not _number(value):
            raise ConditionError(f"cannot negate {value!r}")
        return -value
    if kind == "&&":
        return truthy(evaluate(node[1], lookup)) and truthy(evaluate(node[2], lookup))
    if kind == "||":
        return truthy(evaluate(node[1], lookup)) or truthy(evaluate(node[2], lookup))
    left, right = evaluate(node[1], lookup), evaluate(node[2], lookup)
    return _binary(kind, left, right)


def _binary(op: str, left: Any, right: Any) -> Any:
    if op in ("==", "!="):
        same = (left == right and (_number(left) == _number(right))
                and isinstance(left, bool) == isinstance(right, bool))
        return same if op == "==" else not same
    if op == "+" and isinstance(left, str) and isinstance(right, str):
        return left + right
    if op in ("<", ">", "<=", ">=") and isinstance(left, str) and isinstance(right, str):
        return _compare(op, left, right)
    if not (_number(left) and _number(right)):
        raise ConditionError(f"{op} needs two numbers (or two texts), got {left!r} and "
                             f"{right!r}")
    if op in ("<", ">", "<=", ">="):
        return _compare(op, left, right)
    if op in ("/", "%") and right == 0:
        raise ConditionError(f"{left!r} {op} 0")
    try:
        return {"+": lambda: left + right, "-": lambda: left - right,
                "*": lambda: left * right, "/": lambda: left / right,
                "%": lambda: left % right}[op]()
    except (OverflowError, ValueError) as err:  # huge integers, a float out of range
        raise ConditionError(f"{left!r} {op} {right!r}: {err}") from None


def _compare(op: str, left: Any, right: Any) -> bool:
    return bool({"<": left < right, ">": left > right, "<=": left <= right,
                 ">=": left >= right}[op])
