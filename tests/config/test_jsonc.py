"""JSONC, as devcontainer.json is written: comments and trailing commas go, strings stay
exactly as written (a URL's ``//`` included), and what is not JSONC is an error."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from initd.config import jsonc

# Text that looks like comments, commas and quotes: what a stripper gets wrong.
TRICKY = st.text(alphabet=st.sampled_from([*'/*,"\\ \n\tab}]{[:', "é", "\u2028"]),
                 max_size=12)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                          allow_infinity=False) | TRICKY,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TRICKY, inner, max_size=4),
    max_leaves=20)
GAPS = st.lists(st.sampled_from(["", " ", "\n", "// c, ] } \" /*\n", "/* ] , \" // */",
                                 "/**/", "/* multi\nline */", "\t"]), max_size=3).map("".join)


def write(value: Any, gaps: Any, trailing: Any) -> str:
    """``value`` as JSONC: comments and white space between every two tokens, and
    sometimes a trailing comma."""
    if isinstance(value, list):
        items = [gaps() + write(item, gaps, trailing) + gaps() for item in value]
        comma = "," if value and trailing() else ""
        return "[" + ",".join(items) + comma + gaps() + "]"
    if isinstance(value, dict):
        items = [gaps() + json.dumps(k) + gaps() + ":" + gaps() + write(v, gaps, trailing)
                 + gaps() for k, v in value.items()]
        comma = "," if value and trailing() else ""
        return "{" + ",".join(items) + comma + gaps() + "}"
    return json.dumps(value)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(value=VALUES, data=st.data())
@example(value={"url": "http://example.com//x", "c": "/* not a comment */"}, data=None)
def test_any_json_written_as_jsonc_reads_back_the_same(value: Any, data: Any) -> None:
    if data is None:  # (the example: every gap a comment, every container a trailing comma)
        text = write(value, lambda: " // c\n/* d */", lambda: True)
    else:
        text = data.draw(GAPS) + write(value, lambda: data.draw(GAPS),
                                       lambda: data.draw(st.booleans())) + data.draw(GAPS)
    assert jsonc.loads(text) == value


@settings(max_examples=200, deadline=None)
@given(value=VALUES)
def test_plain_json_is_unchanged(value: Any) -> None:
    text = json.dumps(value, indent=1)
    assert jsonc.strip(text) == text


@pytest.mark.parametrize("text, expected", [
    ('{"a": "http://x.org/y//z"} // tail', {"a": "http://x.org/y//z"}),
    ('{"a": "/* kept */", /* gone */ "b": 1,}', {"a": "/* kept */", "b": 1}),
    ('{"a": "quote \\" // still text"}', {"a": 'quote " // still text'}),
    ('{"a": "\\\\"} // a backslash ends that string', {"a": "\\"}),
    ('[1, 2, /* c */ ]', [1, 2]),
    ('[1, 2, // c\n ]', [1, 2]),
    ('{"a": [1,], "b": {"c": 2,},}', {"a": [1], "b": {"c": 2}}),
])
def test_cases(text: str, expected: Any) -> None:
    assert jsonc.loads(text) == expected


def test_comments_keep_line_numbers_for_errors() -> None:
    with pytest.raises(json.JSONDecodeError) as bad:
        jsonc.loads('{\n  /* one\n two */ "a": 1\n  // three\n  "b" 2\n}')
    assert bad.value.lineno == 5


@pytest.mark.parametrize("text", ["[,]", "{,}", "[1,,]", '{"a": 1,,}', "[1] ,", "/* open",
                                  '{"a": 1} /* never closed', '{"a": "no end}'])
def test_what_is_not_jsonc_is_an_error(text: str) -> None:
    with pytest.raises(ValueError):
        jsonc.loads(text)


def test_nesting_too_deep_is_an_error_not_a_crash() -> None:
    with pytest.raises(jsonc.JSONCError, match="nested too deep"):
        jsonc.loads("[" * 100_000 + "]" * 100_000)
