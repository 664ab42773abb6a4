"""Tests mirror the tree (CONTRIBUTING.md, "Where the tests are"): every module of initd
with logic of its own has its direct tests at the path its own path says,
``initd/<tier>/…/<module>.py`` -> ``tests/<tier>/…/test_<module>.py`` (a package's
``__init__.py`` -> ``tests/<tier>/…/test_<package>.py``; beside it, one aspect a file:
``test_<module>_<aspect>.py``), and one of them imports it by name. A module has logic
of its own when it defines a function or method whose body
is more than a docstring, ``...`` or ``pass`` (constants, re-exports and Protocols have
none). The purpose suites (conformance/, security/, e2e/, bundle/) come besides these.

TIERS names the tiers the check covers: every folder of initd, and the top level's
modules (cli.py, errors.py) as tier ""."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE, TESTS = ROOT / "initd", ROOT / "tests"
TIERS = ("", "pid1", "process", "config", "state", "http", "hooks", "events", "devcontainer",
         "supervisor", "service", "commands")
# Modules whose mirrored tests run them as a process, not imported: what a probe's
# process imports is what it is tested for (each import costs every pod's probes).
PROCESS_TESTED = {"initd.commands.probe",
                  # the supervisor's loop and its signal handlers are the process's own:
                  # their tests run a real initd, or the channel in a child of its own
                  "initd.supervisor.boot", "initd.supervisor.loop",
                  "initd.supervisor.supervised",
                  "initd.supervisor.sigchan", "initd.supervisor.deferred"}


def module_name(path: Path) -> str:
    parts = ["initd", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def mirror(path: Path) -> Path:
    """Where ``path``'s tests are."""
    rel = path.relative_to(PACKAGE)
    if rel.name == "__init__.py":
        return TESTS / rel.parent.parent / f"test_{rel.parent.name}.py"
    return TESTS / rel.parent / f"test_{rel.stem}.py"


def has_logic(path: Path) -> bool:
    def stub(body: list[ast.stmt]) -> bool:
        return all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(
            s.value, ast.Constant)) for s in body)  # a docstring, ``...``
    return any(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and not stub(node.body)
               for node in ast.walk(ast.parse(path.read_text())))


def imported(test: Path, known: set[str]) -> set[str]:
    """The initd modules ``test`` imports by name (anywhere in it)."""
    found = set()
    for node in ast.walk(ast.parse(test.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known
                      else node.module for a in node.names}
    return found


def modules(tiers: tuple[str, ...]) -> list[Path]:
    return [path for tier in tiers for path in (
        sorted(PACKAGE.glob("*.py")) if tier == "" else sorted((PACKAGE / tier).rglob("*.py")))]


def missing(tiers: tuple[str, ...]) -> list[str]:
    """Each module of ``tiers`` with logic whose mirrored test module is not there, or
    does not import it."""
    known = {module_name(p) for p in PACKAGE.rglob("*.py")}
    said = []
    for path in modules(tiers):
        name, test = module_name(path), mirror(path)
        if not has_logic(path):
            continue
        tests = [test, *sorted(test.parent.glob(f"{test.stem}_*.py"))]
        if not test.is_file() and len(tests) == 1:
            said.append(f"{name}: no {test.relative_to(ROOT)}")
        elif name not in PROCESS_TESTED and not any(
                name in imported(t, known) for t in tests if t.is_file()):
            said.append(f"{name}: {test.relative_to(ROOT)} (or its aspects) does not import it")
    return said


@pytest.mark.parametrize("tier", TIERS)
def test_every_module_with_logic_has_its_tests_where_its_path_says(tier: str) -> None:
    assert missing((tier,)) == []


def test_every_folder_of_tests_is_a_package() -> None:
    """Test modules of one name in two folders (dialects/test_claude.py and
    wires/test_claude.py) are two modules only in two packages."""
    folders = {path.parent for path in TESTS.rglob("test_*.py")}
    assert sorted(str(f.relative_to(ROOT)) for f in folders
                  if not (f / "__init__.py").is_file()) == []


def test_the_check_sees_what_it_must() -> None:
    """Negative controls: a module with a function has logic, one of constants or stubs
    has none; a test module's imports are found wherever they are."""
    assert has_logic(PACKAGE / "events" / "shquote.py")
    assert not has_logic(PACKAGE / "events" / "claude" / "names.py")
    assert not has_logic(PACKAGE / "state" / "agentfs" / "__init__.py")
    assert mirror(PACKAGE / "events" / "claude" / "words.py") == \
        TESTS / "events" / "claude" / "test_words.py"
    assert mirror(PACKAGE / "state" / "journal" / "__init__.py") == \
        TESTS / "state" / "test_journal.py"
    known = {module_name(p) for p in PACKAGE.rglob("*.py")}
    assert "initd.events.shquote" in imported(TESTS / "events" / "test_shquote.py", known)
    assert all(path.is_file() for path in modules(TIERS))
