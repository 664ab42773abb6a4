"""The layers of ARCHITECTURE.md, enforced: a test walks every import of initd/ (module
level, inside functions, under TYPE_CHECKING alike) and fails on a back-edge.

    PID-1 tier   cli, __main__, errors, pid1/: the standard library only
    system       process/ < config/ < state/ < http/ (each may use the ones before it)
    hooks        discobot hooks
    events       lifecycle events  |  devcontainer  devcontainer.json (both use hooks)
    supervisor   root's supervisor  |  service  the hook service, as the agent user
    commands     the CLI verbs

A module's tier is its folder: nothing is listed by hand, and a module outside every
folder is an error. A module imports its own tier or a lower one; tiers of one rank
(events and devcontainer; supervisor and service) never import each other; no two modules
import each other, even through others; domain code (hooks, events, devcontainer) never
imports the settings or argparse: it is given plain values.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "initd"
ENTRY = {"initd", "initd.__main__", "initd.cli", "initd.errors"}  # the top level's three
RANK = {"pid1": 0, "process": 1.0, "config": 1.1, "state": 1.2, "http": 1.3, "hooks": 2,
        "events": 3, "devcontainer": 3, "supervisor": 4, "service": 4, "commands": 5}


def tier(module: str) -> str:
    if module in ENTRY:
        return "pid1"
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in RANK:
        return parts[1]
    raise AssertionError(f"{module}: in no tier's folder; move it into one (ARCHITECTURE.md)")


def name_of(path: Path) -> str:
    parts = ["initd", *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {name_of(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports(module: str, path: Path, known: set[str]) -> Iterator[tuple[str, int, bool]]:
    """(imported module, line, at module level) for every import of an initd module."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    top = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                     for a in node.names]
        else:
            continue
        for name in names:
            yield name, node.lineno, id(node) in top


def graph() -> dict[str, list[tuple[str, int, bool]]]:
    found = modules()
    return {module: list(imports(module, path, set(found))) for module, path in found.items()}


def test_every_import_goes_down_the_layers() -> None:
    back = []
    for module, edges in graph().items():
        mine = tier(module)
        for target, line, at_top in edges:
            if not target.startswith("initd") or target == module:
                continue
            theirs = tier(target)
            if module == "initd.cli" and not at_top and theirs == "commands":
                continue  # PID 1's dispatch: the verb's module, after the fork or exec
            if RANK[theirs] > RANK[mine] or (RANK[theirs] == RANK[mine] and theirs != mine):
                back.append(f"{module}:{line} ({mine}) imports {target} ({theirs})")
    assert back == []


def test_no_two_modules_import_each_other() -> None:
    edges = {m: {t for t, _, _ in e if t.startswith("initd") and t != m}
             for m, e in graph().items()}
    cycles = []
    for start in edges:
        stack, seen = [(start, [start])], set()
        while stack:
            node, trail = stack.pop()
            for nxt in edges.get(node, ()):
                if nxt == start:
                    cycles.append(" -> ".join([*trail, nxt]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*trail, nxt]))
    packages = {m for m in edges if (PACKAGE.parent / m.replace(".", "/")).is_dir()}
    # a package's __init__ naming its own modules (dialects, actions) is no cycle
    real = [c for c in cycles if not set(c.split(" -> ")) & packages]
    assert real == []


@pytest.mark.slow
@pytest.mark.parametrize("banned", ["initd.config.settings", "argparse"])
def test_domain_code_is_given_plain_values(banned: str) -> None:
    found = [f"{module}:{line}" for module, edges in graph().items()
             if tier(module) in ("hooks", "events", "devcontainer")
             for target, line, _ in edges if target == banned]
    assert found == []


def test_pid1_imports_only_the_standard_library_at_its_top() -> None:
    outside = []
    for module, edges in graph().items():
        if tier(module) != "pid1":
            continue
        for target, line, at_top in edges:
            root = target.split(".")[0]
            if at_top and root != "initd" and root not in sys.stdlib_module_names:
                outside.append(f"{module}:{line} imports {target}")
            elif at_top and root == "initd" and tier(target) != "pid1":
                outside.append(f"{module}:{line} imports {target} ({tier(target)})")
    assert outside == []


def test_no_module_is_over_300_lines_and_no_function_over_60() -> None:
    """One responsibility per module: a module that grows past 300 lines holds two, and
    a function past 60 lines does several things (CONTRIBUTING, "How to add a module")."""
    long = []
    for module, path in modules().items():
        text = path.read_text()
        if text.count("\n") > 300:
            long.append(f"{module}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                    node.end_lineno is not None and node.end_lineno - node.lineno >= 60:
                long.append(f"{module}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert long == []
