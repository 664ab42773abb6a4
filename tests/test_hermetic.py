"""The suite's own rules: no test module imports another (helpers live in support
modules), so a test module can be run, moved or deleted alone."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).parent


def test_no_test_module_imports_another() -> None:
    found = []
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            found += [f"{path.relative_to(TESTS)}: {name}" for name in names
                      if name.startswith("tests.") and name.split(".")[-1].startswith("test_")]
    assert found == []
