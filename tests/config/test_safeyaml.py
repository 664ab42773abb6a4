"""YAML the agent may have written, parsed so that it cannot cost its reader
(initd/config/safeyaml.py): no Python objects, no anchors or aliases (an alias bomb), at
most DEPTH levels and NODES values; every refusal a YAMLError with its line and column."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from initd.config import safeyaml


def refused(text: str) -> str:
    with pytest.raises(yaml.YAMLError) as raised:
        safeyaml.load(text)
    return str(raised.value)


def test_plain_documents_read_as_safe_load_reads_them() -> None:
    text = "type: file\npattern: '*.py'\ntimeout: 30\nblock: true\nlist: [a, {b: 1}]\n"
    assert safeyaml.load(text) == yaml.safe_load(text) == {
        "type": "file", "pattern": "*.py", "timeout": 30, "block": True,
        "list": ["a", {"b": 1}]}
    assert safeyaml.load("") is None and safeyaml.load("# only a comment\n") is None


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9))
    said = refused(bomb)
    assert "anchors (&a) and aliases are not accepted here: write the value out" in said
    assert "line 1, column 4" in said


def test_an_alias_alone_is_refused_and_named() -> None:
    said = refused("a: 1\nb: *a\n")
    assert "YAML aliases (*a) and anchors are not accepted here" in said
    assert "line 2, column 4" in said


def test_python_objects_are_never_made() -> None:
    said = refused("!!python/object/apply:os.system ['touch /tmp/pwned']\n")
    assert "could not determine a constructor" in said


def test_nesting_past_depth_is_refused_at_its_line() -> None:
    ok = "[" * (safeyaml.DEPTH - 1) + "]" * (safeyaml.DEPTH - 1)
    assert safeyaml.load(ok) is not None
    deep = "[" * (safeyaml.DEPTH + 1) + "]" * (safeyaml.DEPTH + 1)
    assert f"nested more than {safeyaml.DEPTH} levels deep" in refused(deep)
    block = "".join(f"{'  ' * i}k{i}:\n" for i in range(safeyaml.DEPTH + 2))
    said = refused(block)
    assert "nested more than" in said and f"line {safeyaml.DEPTH}," in said  # (k31's)


def test_more_than_nodes_values_are_refused() -> None:
    assert len(safeyaml.load("[" + "1," * (safeyaml.NODES - 2) + "1]")) == \
        safeyaml.NODES - 1
    assert f"more than {safeyaml.NODES} values" in refused("[" + "1," * safeyaml.NODES + "1]")


def test_a_syntax_error_is_a_yaml_error_with_where() -> None:
    said = refused("hooks:\n\tpre: []\n")
    assert "line 2, column 1" in said


@given(st.text(alphabet=st.sampled_from(list("&*![]{}:,-? \n\t'\"#|>a1%@`")), max_size=60))
def test_any_text_is_data_or_a_yaml_error(text: str) -> None:
    try:
        safeyaml.load(text)
    except yaml.YAMLError:
        pass
