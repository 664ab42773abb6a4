"""File-hook glob patterns (initd.hooks.patterns): table tests of matches() and matching()."""

from __future__ import annotations

import pytest

from initd.hooks import patterns

MATCH = [
    # A pattern without "/" matches the base name at any depth.
    ("*.go", "main.go"),
    ("*.go", "cmd/x/main.go"),
    ("*.md", "docs/a/b/c/README.md"),
    ("Makefile", "sub/Makefile"),
    # A pattern with "/" is anchored at the workspace root.
    ("src/*.go", "src/a.go"),
    ("src/**/*.ts", "src/c.ts"),
    ("src/**/*.ts", "src/a/c.ts"),
    ("src/**/*.ts", "src/a/b/c.ts"),
    ("**/*.go", "a.go"),
    ("**/*.go", "a/b/c.go"),
    # Braces, numeric ranges, extglob.
    ("*.{ts,tsx}", "a.ts"),
    ("*.{ts,tsx}", "a.tsx"),
    ("*.{ts,tsx}", "web/app/a.tsx"),
    ("{package.json,pnpm*.yaml}", "package.json"),
    ("{package.json,pnpm*.yaml}", "pnpm-lock.yaml"),
    ("file{1..3}.txt", "file1.txt"),
    ("file{1..3}.txt", "file2.txt"),
    ("file{1..3}.txt", "file3.txt"),
    ("*.+(js|ts)", "a.js"),
    ("*.+(js|ts)", "a.ts"),
    ("*.+(js|ts)", "a.jsts"),
    ("*.+(js|ts)", "lib/a.ts"),
    ("*.@(c|h)", "x.h"),
    # Negation with !(…).
    ("!(node_modules)/**", "src/a.js"),
    ("!(node_modules)/**", "src/deep/b.js"),
    ("!(node_modules)/**", "node_modules_old/a.js"),
    # Dot files when named explicitly.
    (".github/**", ".github/workflows/ci.yml"),
    (".github/**", ".github/CODEOWNERS"),
    (".env", ".env"),
    (".*", ".env"),
    # Awkward names: taken literally, never interpreted.
    ("*.txt", "a b.txt"),
    ("*.txt", "dir with space/a b.txt"),
    ("*.txt", 'say "hi".txt'),
    ("*.txt", "it's.txt"),
    ("*.txt", "$(touch x).txt"),
    ("*.txt", "`id`.txt"),
    ("*.txt", "ünïcödé.txt"),
    ("*.py", "日本/語.py"),
    ("日本/*.py", "日本/語.py"),
    ("*.txt", "line\nbreak.txt"),
    ("*.txt", "dir/line\nbreak.txt"),
    ("src/*", "src/line\nbreak"),
    ("a b/*.go", "a b/c.go"),
]

NO_MATCH = [
    ("*.go", "main.goo"),
    ("*.go", "main.go.txt"),
    ("*.go", "cmd/go/main.c"),
    # Anchored at the root: not deeper, not in a subdirectory.
    ("src/*.go", "lib/src/a.go"),
    ("src/*.go", "src/x/a.go"),
    ("src/**/*.ts", "lib/src/c.ts"),
    ("src/**/*.ts", "src/c.js"),
    ("*.{ts,tsx}", "a.tsxx"),
    ("*.{ts,tsx}", "a.js"),
    ("file{1..3}.txt", "file0.txt"),
    ("file{1..3}.txt", "file4.txt"),
    ("file{1..3}.txt", "file{1..3}.txt"),
    ("*.+(js|ts)", "a.tsx"),
    ("*.+(js|ts)", "a.py"),
    ("!(node_modules)/**", "node_modules/a.js"),
    ("!(node_modules)/**", "node_modules/x/y/a.js"),
    # Dot files are not matched by wildcards.
    ("*", ".x"),
    ("*.go", ".x.go"),
    ("*.go", ".hidden/x.go"),
    ("*.go", "a/.hidden/x.go"),
    ("**/*.go", ".hidden/x.go"),
    ("**", ".github/x"),
    ("*", ".github/workflows/ci.yml"),
    ("*.yml", ".github/workflows/ci.yml"),
    # An explicit dot directory is anchored too.
    (".github/**", "a/.github/x"),
    # Awkward names are literal, not patterns of their own.
    ("*.txt", "line\nbreak.md"),
    ("$(touch x).txt", "y.txt"),
    ("日本/*.py", "中国/語.py"),
]


@pytest.mark.parametrize(("pattern", "path"), MATCH)
def test_matches(pattern: str, path: str) -> None:
    """Guards against a pattern failing to select a file the hook author meant."""
    assert patterns.matches(pattern, path) is True


@pytest.mark.parametrize(("pattern", "path"), NO_MATCH)
def test_does_not_match(pattern: str, path: str) -> None:
    """Guards against a hook running on files its pattern does not name."""
    assert patterns.matches(pattern, path) is False


def test_matching_keeps_input_order() -> None:
    """Guards against matching() sorting or reordering the files it is given."""
    paths = ["z.go", "a.txt", "m/b.go", "a.go", ".hidden.go", "c/.d/e.go", "b b.go"]
    assert patterns.matching("*.go", paths) == ["z.go", "m/b.go", "a.go", "b b.go"]


def test_matching_keeps_duplicates_and_accepts_an_iterator() -> None:
    """Guards against matching() needing a list or silently dropping repeated entries."""
    assert patterns.matching("*.go", iter(["b.go", "a.go", "b.go"])) == ["b.go", "a.go", "b.go"]


def test_matching_nothing() -> None:
    """Guards against matching() inventing paths when none (or no input) match."""
    assert patterns.matching("*.go", []) == []
    assert patterns.matching("*.go", ["a.py", ".x.go"]) == []


def test_no_side_effect_from_a_command_substitution_name(tmp_path, monkeypatch) -> None:
    """Guards against a path or pattern ever reaching a shell while matching."""
    monkeypatch.chdir(tmp_path)
    assert patterns.matches("$(touch CANARY)*", "$(touch CANARY).txt")
    assert patterns.matching("*", ["$(touch CANARY)", "`touch CANARY`"]) == [
        "$(touch CANARY)", "`touch CANARY`"]
    assert list(tmp_path.iterdir()) == []
