"""Front matter: the three delimiter styles, where a block may sit, and how broken ones fail.

The contract under test: ``parse`` returns a dict (front matter), None (no front matter) or
raises FrontMatterError with a message that says where and how. Never any other exception:
``initd hooks check`` and discovery only catch FrontMatterError, so anything else takes the
whole hook directory down with it.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from initd.hooks import frontmatter
from initd.hooks.frontmatter import FrontMatterError
from initd.hooks.model import hook_id

# Deterministic: no example database written into the checkout, no flaky first-run deadline.
PROPERTY = settings(max_examples=400, deadline=None, database=None, derandomize=True)

NAMED = {"name": "lint", "type": "session"}
NESTED = {"name": "lint", "env": {"A": 1, "B": ["x", "y"]}, "steps": ["a", {"k": "v"}]}

GOOD = [
    pytest.param("---\nname: lint\ntype: session\n---\necho hi\n", NAMED, id="dashes"),
    pytest.param("#---\n# name: lint\n# type: session\n#---\necho hi\n", NAMED, id="hash"),
    pytest.param("//---\n// name: lint\n// type: session\n//---\nmain()\n", NAMED, id="slashes"),
    pytest.param("#!/bin/sh\n---\nname: lint\ntype: session\n---\necho hi\n", NAMED,
                 id="shebang-then-dashes"),
    pytest.param("#!/bin/sh\n#---\n# name: lint\n# type: session\n#---\necho hi\n", NAMED,
                 id="shebang-then-hash"),
    pytest.param("#!/usr/bin/env node\n//---\n// name: lint\n// type: session\n//---\n", NAMED,
                 id="shebang-then-slashes"),
    pytest.param("#!/bin/sh\r\n#---\r\n# name: lint\r\n# type: session\r\n#---\r\necho hi\r\n",
                 NAMED, id="crlf"),
    pytest.param("---\rname: lint\rtype: session\r---\r", NAMED, id="cr-only"),
    pytest.param("\ufeff---\nname: lint\ntype: session\n---\n", NAMED, id="utf8-bom"),
    pytest.param("\ufeff#!/bin/sh\n#---\n# name: lint\n# type: session\n#---\n", NAMED,
                 id="utf8-bom-then-shebang"),
    pytest.param("---\nname: lint\ntype: session\n---", NAMED, id="closer-without-newline"),
    pytest.param("---  \nname: lint\ntype: session\n  ---\t\n", NAMED,
                 id="delimiters-with-surrounding-whitespace"),
    pytest.param("#---\n#name: lint\n#type: session\n#---\n", NAMED, id="hash-without-space"),
    pytest.param("#---\n  # name: lint\n\t# type: session\n#---\n", NAMED,
                 id="indented-comment-prefix"),
    pytest.param("#---\n# name: lint\n\n   \n# type: session\n#---\n", NAMED,
                 id="blank-lines-inside-comment-style"),
    pytest.param("---\n# a YAML comment\nname: lint  # trailing comment\ntype: session\n---\n",
                 NAMED, id="yaml-comments"),
    pytest.param("---\n---\n", {}, id="empty-block"),
    pytest.param("#---\n#---\n", {}, id="empty-hash-block"),
    pytest.param("---\n\n  \n---\n", {}, id="blank-block"),
    pytest.param("#---\n#\n# \n#---\n", {}, id="comment-only-block"),
    pytest.param("---\nname: lint\n---\n---\nname: other\n---\n", {"name": "lint"},
                 id="only-the-first-block-counts"),
    pytest.param('---\nname: "a\tb"\n---\n', {"name": "a\tb"}, id="tab-in-double-quoted-value"),
    pytest.param("---\nname: 'a\tb'\n---\n", {"name": "a\tb"}, id="tab-in-single-quoted-value"),
    pytest.param("---\ndescription: |\n  a\tb\n---\n", {"description": "a\tb"},
                 id="tab-in-block-scalar"),
    pytest.param("#---\n# name: 'a\tb'\n#---\n", {"name": "a\tb"}, id="tab-in-hash-style-value"),
    pytest.param("---\nname: lint\nenv:\n  A: 1\n  B: [x, y]\nsteps:\n  - a\n  - {k: v}\n---\n",
                 NESTED, id="nested-dashes"),
    pytest.param("#---\n# name: lint\n# env:\n#   A: 1\n#   B:\n#     - x\n#     - y\n"
                 "# steps: [a, {k: v}]\n#---\n", NESTED, id="nested-hash"),
    pytest.param("//---\n// name: lint\n// env: {A: 1, B: [x, y]}\n// steps:\n//   - a\n"
                 "//   - k: v\n//---\n", NESTED, id="nested-slashes"),
    pytest.param("---\nnotify_llm: false\nblocking: yes\ntimeout: 30\nratio: 0.5\n---\n",
                 {"notify_llm": False, "blocking": True, "timeout": 30, "ratio": 0.5},
                 id="yaml-types-are-kept"),
    pytest.param("---\n1: one\nfalse: f\n---\n", {"1": "one", "False": "f"},
                 id="non-string-keys-become-strings"),
    pytest.param("---\nname: lint\n#---\ntype: session\n---\n", NAMED,
                 id="other-delimiter-inside-is-content"),
]


@pytest.mark.parametrize(("text", "expected"), GOOD)
def test_parse_good(text: str, expected: dict[str, Any]) -> None:
    """Each delimiter style, placement and line ending yields exactly the YAML mapping."""
    assert frontmatter.parse(text) == expected


NONE = [
    pytest.param("", id="empty-file"),
    pytest.param("\n\n", id="blank-lines"),
    pytest.param("\ufeff", id="bom-only"),
    pytest.param("echo hi\n", id="plain-script"),
    pytest.param("#!/bin/sh\n", id="shebang-only"),
    pytest.param("#!/bin/sh", id="shebang-without-newline"),
    pytest.param("#!/bin/sh\necho hi\n---\nname: lint\n---\n", id="delimiter-after-code"),
    pytest.param("#!/bin/sh\n\n---\nname: lint\n---\n", id="delimiter-on-line-3"),
    pytest.param("#!/bin/sh\n# comment\n#---\n# name: lint\n#---\n", id="hash-on-line-3"),
    pytest.param("\n---\nname: lint\n---\n", id="line-2-without-shebang"),
    pytest.param("# hello\n---\nname: lint\n---\n", id="line-2-after-plain-comment"),
    pytest.param("#!/bin/sh\n#!/bin/bash\n---\n", id="two-shebangs"),
    pytest.param("# ---\n# name: lint\n# ---\n", id="spaced-hash-is-not-a-delimiter"),
    pytest.param("// ---\n// name: lint\n// ---\n", id="spaced-slashes-is-not-a-delimiter"),
    pytest.param("----\nname: lint\n----\n", id="four-dashes"),
    pytest.param("--- name: lint\n", id="dashes-with-content"),
    pytest.param("--\nname: lint\n--\n", id="two-dashes"),
    pytest.param("# README\n\nNot a hook.\n", id="readme"),
]


@pytest.mark.parametrize("text", NONE)
def test_parse_no_front_matter(text: str) -> None:
    """Only a delimiter on line 1 (or 2, after a shebang) opens front matter; else None."""
    assert frontmatter.parse(text) is None


ERRORS = [
    pytest.param("---\nname: lint\n", ["never closed", "'---'", "line 1"], id="unclosed-dashes"),
    pytest.param("#---\n# name: lint\n", ["never closed", "'#---'", "line 1"],
                 id="unclosed-hash"),
    pytest.param("//---\n// name: lint\n", ["never closed", "'//---'", "line 1"],
                 id="unclosed-slashes"),
    pytest.param("#!/bin/sh\n---\nname: lint\n", ["never closed", "line 2"],
                 id="unclosed-after-shebang"),
    pytest.param("---\n", ["never closed"], id="opener-only"),
    pytest.param("---\nname: lint\n#---\n", ["never closed", "'---'"],
                 id="closed-by-another-style"),
    pytest.param("#---\n# name: lint\ntype: session\n#---\n", ["line 3", "'#'"],
                 id="hash-line-missing-prefix"),
    pytest.param("//---\n// name: lint\n# type: session\n//---\n", ["line 3", "'//'"],
                 id="slashes-line-missing-prefix"),
    pytest.param("#!/bin/sh\n#---\n# name: lint\n\necho hi\n#---\n", ["line 5", "'#'"],
                 id="missing-prefix-line-counts-the-shebang"),
    pytest.param("#---\n# name: lint\n//---\n", ["line 3", "'#'"],
                 id="hash-block-closed-by-slashes"),
    pytest.param("---\n- a\n- b\n---\n", ["expected 'key: value'", "list"], id="yaml-list"),
    pytest.param("---\njust some text\n---\n", ["expected 'key: value'", "str"],
                 id="yaml-string-scalar"),
    pytest.param("---\n42\n---\n", ["expected 'key: value'", "int"], id="yaml-int-scalar"),
    pytest.param("#---\n# - a\n#---\n", ["expected 'key: value'", "list"], id="hash-yaml-list"),
    pytest.param('---\nname: "\n---\n', ["invalid YAML", "line 1"], id="lone-double-quote"),
    pytest.param("---\nname: '\n---\n", ["invalid YAML"], id="lone-single-quote"),
    pytest.param('#---\n# name: "\n#---\n', ["invalid YAML"], id="hash-lone-double-quote"),
    pytest.param("---\nenv:\n\tA: 1\n---\n", ["invalid YAML", "line 2", "column 1"],
                 id="tab-indentation"),
    pytest.param("#---\n# env:\n#\tA: 1\n#---\n", ["invalid YAML", "line 2"],
                 id="hash-tab-indentation"),
    pytest.param("---\nname: [a, b\n---\n", ["invalid YAML"], id="unclosed-flow-sequence"),
    pytest.param("---\nname: lint\n  type: session\n---\n", ["invalid YAML"],
                 id="bad-indentation"),
    pytest.param("---\nname: *nowhere\n---\n", ["invalid YAML", "nowhere"],
                 id="undefined-alias"),
    pytest.param("---\n? [a]\n: b\n---\n", ["invalid YAML", "unhashable"],
                 id="unhashable-key"),
    pytest.param("---\nx: !!python/object:os.system {}\n---\n", ["invalid YAML"],
                 id="python-tag-refused"),
    pytest.param("#---\n# a: 1\n# ---\n# b: 2\n#---\n", ["invalid YAML"],
                 id="two-yaml-documents"),
    pytest.param("---\nname: a\x00b\n---\n", ["invalid YAML"], id="nul-character"),
]


@pytest.mark.parametrize(("text", "fragments"), ERRORS)
def test_parse_broken(text: str, fragments: list[str]) -> None:
    """Broken front matter raises FrontMatterError whose message says where and how."""
    with pytest.raises(FrontMatterError) as caught:
        frontmatter.parse(text)
    for fragment in fragments:
        assert fragment in str(caught.value)


def test_front_matter_error_is_a_value_error() -> None:
    """Callers that catch ValueError keep working."""
    assert issubclass(FrontMatterError, ValueError)


def _limitation(reason: str, raises: type[BaseException]) -> pytest.MarkDecorator:
    """PyYAML's, not ours: expected to fail, and only in the way described."""
    return pytest.mark.xfail(reason=f"PyYAML limitation: {reason}", raises=raises, strict=True)


# PyYAML's constructors raise their own errors on bad values; parse() must turn every one
# into a FrontMatterError, or one hook's typo would hide every other hook.
ESCAPING = [
    pytest.param("---\ncreated: 2024-02-30\n---\n", id="impossible-date"),
    pytest.param("---\ncreated: 2024-13-01\n---\n", id="month-13"),
    pytest.param("---\nmask: 0b_\n---\n", id="binary-int-without-digits"),
    pytest.param("---\nmask: 0x_\n---\n", id="hex-int-without-digits"),
    pytest.param("---\nn: !!int lots\n---\n", id="explicit-int-tag"),
    pytest.param("---\nn: !!int\n---\n", id="explicit-int-tag-empty"),
    pytest.param("---\nn: !!float lots\n---\n", id="explicit-float-tag"),
    pytest.param("---\nn: !!bool maybe\n---\n", id="explicit-bool-tag"),
    pytest.param("---\nn: !!timestamp soon\n---\n", id="explicit-timestamp-tag"),
    pytest.param("---\nn: " + "9" * 5000 + "\n---\n", id="int-over-4300-digits"),
    pytest.param("---\nn: " + "[" * 5000 + "\n---\n", id="deep-flow-nesting"),
    pytest.param("#---\n# " + "{a: " * 3000 + "1" + "}" * 3000 + "\n#---\n",
                 id="deep-mapping-nesting"),
]


@pytest.mark.parametrize("text", ESCAPING)
def test_parse_broken_yaml_values_raise_front_matter_error(text: str) -> None:
    """YAML that PyYAML cannot construct is broken front matter, not a crash."""
    with pytest.raises(FrontMatterError):
        frontmatter.parse(text)


PLAIN_TABS = _limitation(
    "a tab inside an unquoted value ('name: a<TAB>b', or a trailing tab after a value) is "
    "rejected as 'found character \\t that cannot start any token'; YAML allows tabs as "
    "in-line white space, PyYAML does not (yaml/pyyaml#306, #450)", FrontMatterError)


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("---\nname: a\tb\n---\n", {"name": "a\tb"}, id="tab-inside-plain-value",
                 marks=PLAIN_TABS),
    pytest.param("---\nname: lint\t\n---\n", {"name": "lint"}, id="trailing-tab",
                 marks=PLAIN_TABS),
])
def test_parse_tabs_in_unquoted_values(text: str, expected: dict[str, Any]) -> None:
    """A tab inside a value (not indentation) is fine, quoted or not."""
    assert frontmatter.parse(text) == expected


def _outcome(text: str) -> dict[str, Any] | FrontMatterError | None:
    """parse()'s result or its FrontMatterError; any other exception fails the test."""
    try:
        return frontmatter.parse(text)
    except FrontMatterError as err:
        return err


def _check(result: dict[str, Any] | FrontMatterError | None) -> None:
    if isinstance(result, FrontMatterError):
        assert str(result)  # an error always says something
    elif result is not None:
        assert isinstance(result, dict)
        assert all(isinstance(key, str) for key in result)


@PROPERTY
@given(st.text())
def test_parse_arbitrary_text_never_raises_anything_else(text: str) -> None:
    """Any text at all: a mapping, None or FrontMatterError - never another exception."""
    _check(_outcome(text))


@PROPERTY
@given(style=st.sampled_from(sorted(frontmatter.PREFIXES)), body=st.text(),
       shebang=st.booleans(), prefixed=st.booleans())
def test_parse_arbitrary_block_never_raises_anything_else(style: str, body: str, shebang: bool,
                                                          prefixed: bool) -> None:
    """Any text between valid delimiters: a mapping or FrontMatterError, never None or a crash."""
    prefix = frontmatter.PREFIXES[style]
    if prefixed and prefix:
        body = "\n".join(f"{prefix} {line}" for line in body.split("\n"))
    text = ("#!/bin/sh\n" if shebang else "") + f"{style}\n{body}\n{style}\n"
    result = _outcome(text)
    assert result is not None  # the opener is there, so this is front matter, good or bad
    _check(result)


YAML_TOKENS = ["a", "name", ":", ": ", "- ", "\n", "  ", "\t", "'", '"', "[", "]", "{", "}",
               ", ", "#", "&x ", "*x", "? ", "|", ">", "~", "!!str ", "!!int ", "!!float ",
               "!!bool ", "!!timestamp ", "0", "1", "9", "_", ".", "x", "b", "-", "2024-02-30",
               "yes", "null"]


@PROPERTY
@given(body=st.lists(st.sampled_from(YAML_TOKENS), max_size=30).map("".join))
@example(body="created: 2024-02-30")
@example(body="n: !!bool maybe")
@example(body="n: !!int ")
def test_parse_yaml_shaped_block_never_raises_anything_else(body: str) -> None:
    """YAML-looking text between delimiters: a mapping or FrontMatterError, never a crash."""
    result = _outcome(f"---\n{body}\n---\n")
    assert result is not None
    _check(result)


@pytest.mark.parametrize(("filename", "expected"), [
    ("foo.bar.sh", "foo-bar"),
    ("test (1).sh", "test1"),
    (".hidden.sh", "hidden"),
    ("service..sh", "service"),
    ("UPPER.PY", "upper"),
    ("name.txt", "name-txt"),
    ("lint", "lint"),
    ("lint.SH", "lint"),
    ("my_hook.bash", "my_hook"),
    ("fmt.zsh", "fmt"),
    ("check.js", "check"),
    ("types.d.ts", "types-d"),
    ("a.rb", "a"),
    ("b.pl", "b"),
    ("c.php", "c"),
    ("archive.tar.gz", "archive-tar-gz"),
    ("foo.sh.txt", "foo-sh-txt"),
    ("--x--.sh", "x"),
    ("Go Vet!.sh", "govet"),
    ("café.sh", "caf"),
    ("!!!.sh", ""),
])
def test_hook_id(filename: str, expected: str) -> None:
    """File names normalise to discobot's hook ids (one script extension off, [a-z0-9_-])."""
    assert hook_id(filename) == expected
