"""One idiom per concept, and the standard library's own (ARCHITECTURE.md, "Decisions"):
no module of initd imports a private module of CPython's; a record is a namedtuple, spelled
``typing.NamedTuple``, or, in a module a plain start imports (which cannot afford
``typing``), ``collections.namedtuple`` with its fields annotated for the type checker;
``TYPE_CHECKING`` is spelled by hand only where ``typing`` is not imported anyway."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.support import imports

PACKAGE = Path(__file__).resolve().parent.parent / "initd"
SOURCES = sorted(PACKAGE.rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(tree: ast.AST) -> list[str]:
    """Every module an import statement names, at any depth (inside functions too)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_no_module_imports_a_private_module_of_cpythons() -> None:
    private = {f"{path.relative_to(PACKAGE.parent)}: {name}" for path in SOURCES
               for name in imported_names(ast.parse(path.read_text()))
               if name.split(".")[0].startswith("_") and name != "__future__"}
    assert private == set()


def records() -> list[type]:
    """Every class that defines a record's fields (a subclass of one, which adds methods
    only, is not one more)."""
    found = []
    for path in SOURCES:
        if path.name == "__main__.py":
            continue
        module = importlib.import_module(module_name(path))
        found.extend(value for value in vars(module).values()
                     if isinstance(value, type) and value.__module__ == module.__name__
                     and issubclass(value, tuple) and hasattr(value, "_fields")
                     and (value.__bases__ == (tuple,) or spelled_with_collections(value)))
    return found


def spelled_with_collections(record: type) -> bool:
    """``class X(namedtuple("X", ...))``: its one base is the namedtuple itself (typing's
    class statement makes the record's own class a direct subclass of tuple)."""
    base, = record.__bases__
    return (base.__bases__ == (tuple,) and hasattr(base, "_fields")
            and "__annotations__" not in vars(base) and base.__name__ == record.__name__)


def test_every_records_annotations_are_its_fields_in_order() -> None:
    """What the type checker reads (the annotations) is what the tuple holds."""
    found = records()
    assert len(found) > 30
    wrong = {record.__qualname__: (tuple(vars(record).get("__annotations__", {})),
                                   record._fields)  # type: ignore[attr-defined]
             for record in found
             if tuple(vars(record).get("__annotations__", {})) != record._fields}  # type: ignore[attr-defined]
    assert wrong == {}


def test_a_record_is_spelled_with_collections_only_where_a_plain_start_needs_it(
        tmp_path: Path) -> None:
    plain = imports.imported("--", "true", cwd=tmp_path)
    assert "typing" not in plain
    spelled = {record.__module__ for record in records() if spelled_with_collections(record)}
    assert spelled, "none found: the check has lost its subject"
    assert spelled - plain == set()  # the rest of the tree: typing.NamedTuple
    typed = {record.__module__ for record in records() if not spelled_with_collections(record)}
    assert typed & plain == set()


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: module_name(path))
def test_type_checking_is_spelled_by_hand_only_where_typing_is_not_imported(
        path: Path) -> None:
    tree = ast.parse(path.read_text())
    by_hand = any(isinstance(node, ast.Assign) and ast.unparse(node) == "TYPE_CHECKING = False"
                  for node in tree.body)
    at_run_time = {node.module for node in tree.body
                   if isinstance(node, ast.ImportFrom) and node.module == "typing"}
    at_run_time |= {alias.name for node in tree.body if isinstance(node, ast.Import)
                    for alias in node.names if alias.name == "typing"}
    assert not (by_hand and at_run_time), "import TYPE_CHECKING from typing, imported anyway"
