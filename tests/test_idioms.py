"""One idiom per concept, and the standard library's own (ARCHITECTURE.md, "Decisions"):
no module of initd imports a private module of CPython's; a record is a
``typing.NamedTuple``; ``TYPE_CHECKING`` comes from ``typing``, except in the modules of
the two processes that never import it (PID 1, for the container's whole life, and an
exec probe), which spell it ``TYPE_CHECKING = False``."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "initd"
SOURCES = sorted(PACKAGE.rglob("*.py"))
BY_HAND = "TYPE_CHECKING = False"


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


def test_a_record_is_a_typing_namedtuple() -> None:
    """No ``collections.namedtuple`` (nor any other spelling of a record class)."""
    spelled = {str(path.relative_to(PACKAGE.parent)) for path in SOURCES
               if "namedtuple" in imported_names(ast.parse(path.read_text()))
               or "collections.namedtuple" in path.read_text()
               or "from collections import namedtuple" in path.read_text()}
    assert spelled == set()


def modules_of(code: str, *args: str) -> set[str]:
    """initd's modules a process running ``code`` imports, and whether it imports typing."""
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         timeout=60)
    return set(out.stdout.split())


LISTED = "import sys\ntry:\n{}\nfinally:\n    print(*sys.modules)"


def test_type_checking_by_hand_only_where_typing_never_comes() -> None:
    probe = modules_of(LISTED.format("    from initd import cli; cli.main(sys.argv[1:])"),
                       "ready", "--socket", "/nonexistent/initd.sock")
    pid1 = modules_of(LISTED.format("    from initd import cli; from initd.pid1 import reaper"))
    assert "typing" not in probe and "typing" not in pid1
    lean = {name for name in probe | pid1 if name.startswith("initd")}
    by_hand = {module_name(path) for path in SOURCES if BY_HAND in path.read_text()}
    assert by_hand - lean == set(), "from typing import TYPE_CHECKING there"
    typed = {module_name(path) for path in SOURCES if module_name(path) in lean
             and any(isinstance(node, ast.ImportFrom) and node.module == "typing"
                     for node in ast.parse(path.read_text()).body)}  # (at run time)
    assert typed == set(), "PID 1 and an exec probe never import typing"


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: module_name(path))
def test_type_checking_is_never_spelled_twice(path: Path) -> None:
    text = path.read_text()
    assert not (BY_HAND in text and "TYPE_CHECKING" in text.split(BY_HAND, 1)[0]), \
        "one TYPE_CHECKING per module"
