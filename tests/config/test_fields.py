"""The one field checker every format shares (initd/config/fields.py): each field checked
as it is taken, a wrong one a LoadError naming the file, the key and what was expected
(the agent's value shown cut short, on one line), and the fields no one took warned."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from initd.config.fields import Fields
from initd.config.problems import LoadError

FILE = "/ws/.nyzhi/config.toml"


def fields(data: object, key: str | None = "agent.hooks[0]", **kw: object) -> Fields:
    return Fields(data, FILE, key, **kw)  # type: ignore[arg-type]


def error(call: object) -> LoadError:
    """The LoadError ``call()`` raises."""
    with pytest.raises(LoadError) as raised:
        call()  # type: ignore[operator]
    return raised.value


@pytest.mark.parametrize("data, said", [
    ([1, 2], "expected a mapping of fields, got list [1, 2]"),
    ("text", "expected a mapping of fields, got str 'text'"),
    (None, "expected a mapping of fields, got NoneType None"),
])
def test_an_entry_that_is_no_mapping_names_the_file_and_the_key(data: object,
                                                                 said: str) -> None:
    err = error(lambda: fields(data))
    assert err.problem == (FILE, "agent.hooks[0]", said, "error")
    assert str(err) == f"{FILE}: agent.hooks[0]: {said}"


def test_a_wrong_field_is_named_under_its_entrys_key_or_alone_at_the_top() -> None:
    assert error(lambda: fields({"command": 3}).text("command")).problem.key == \
        "agent.hooks[0].command"
    top = error(lambda: fields({"command": 3}, key=None).text("command"))
    assert top.problem.key == "command" and top.problem.path == FILE


def test_the_error_class_is_the_callers() -> None:
    class FrontMatterError(LoadError):
        pass

    f = fields({"timeout": "soon"}, error=FrontMatterError)
    assert isinstance(error(lambda: f.number("timeout", 1.0)), FrontMatterError)
    assert isinstance(error(lambda: fields(7, error=FrontMatterError)), FrontMatterError)


def test_text() -> None:
    f = fields({"command": "make", "blank": "  ", "n": 3})
    assert f.text("command") == "make"
    assert f.text("missing", default="d") == "d"
    assert f.text("blank") == "  "  # (only a required text must have something in it)
    assert error(lambda: f.text("missing", required=True)).problem.reason == "required"
    assert error(lambda: f.text("blank", required=True)).problem.reason == \
        "expected text, got '  '"
    assert error(lambda: f.text("n")).problem.reason == "expected text, got 3"
    assert error(lambda: f.text("n", typed=True)).problem.reason == \
        "expected text, got int 3"


@pytest.mark.parametrize("value, nulls, read", [
    (True, True, True), (False, True, False), (None, True, "default"),
    (None, False, "wrong"),  # front matter's ``block:`` left empty is a mistake
    ("yes", True, "wrong"), (1, True, "wrong"), (0, True, "wrong"),
])
def test_flag(value: object, nulls: bool, read: object) -> None:
    f = fields({"block": value}, nulls=nulls)
    if read == "wrong":
        assert error(lambda: f.flag("block", True)).problem.reason.startswith(
            "expected true or false, got ")
    else:
        assert f.flag("block", True) is (True if read == "default" else read)


def test_a_missing_flag_or_number_is_the_default_even_when_nulls_are_wrong() -> None:
    f = fields({}, nulls=False)
    assert f.flag("block", False) is False and f.number("timeout", 30.0) == 30.0


@pytest.mark.parametrize("value, kw, read", [
    (5, {}, 5.0), (0.5, {}, 0.5), (2, {"scale": 1000.0}, 2000.0),
    (0, {"positive": False}, 0.0), (3, {"whole": True}, 3.0),
])
def test_a_good_number(value: object, kw: dict[str, object], read: float) -> None:
    assert fields({"timeout": value}).number("timeout", 1.0, **kw) == read  # type: ignore[arg-type]


@pytest.mark.parametrize("value, kw, said", [
    (0, {}, "expected a number > 0, got 0"),
    (-1, {"positive": False}, "expected a number >= 0, got -1"),
    ("60s", {}, "expected a number > 0, got '60s'"),
    (True, {}, "expected a number > 0, got True"),  # a bool is no number here
    (math.nan, {}, "expected a number > 0, got nan"),
    (math.inf, {}, "expected a number > 0, got inf"),
    (1.5, {"whole": True}, "expected a whole number > 0, got 1.5"),
    (70000, {"below": 65536.0, "positive": False}, "expected a number >= 0, got 70000"),
    (5, {"unit": "seconds", "below": 5.0}, "expected a number of seconds > 0, got 5"),
    (10**400, {}, "expected a number > 0, got <a very large number>"),  # no OverflowError
    ([1], {}, "expected a number > 0, got [1]"),
])
def test_a_wrong_number_says_what_was_expected(value: object, kw: dict[str, object],
                                               said: str) -> None:
    f = fields({"timeout": value})
    err = error(lambda: f.number("timeout", 1.0, **kw))  # type: ignore[arg-type]
    assert err.problem.reason == said and err.problem.key == "agent.hooks[0].timeout"


def test_choice() -> None:
    f = fields({"on_error": "deny", "bad": "stop", "list": ["deny"]})
    assert f.choice("on_error", ("allow", "deny"), "allow") == "deny"
    assert f.choice("missing", ("allow", "deny"), "allow") == "allow"
    assert error(lambda: f.choice("bad", ("allow", "deny"), "allow")).problem.reason == \
        "expected one of allow, deny, got 'stop'"
    assert "got ['deny']" in str(error(lambda: f.choice("list", ("deny",), "deny")))


def test_names() -> None:
    f = fields({"a": "*.ts, *.tsx,,", "b": ["bash", " git "], "c": 3, "d": ["x", 1]})
    assert f.names("a") == ("*.ts", "*.tsx") and f.names("b") == ("bash", "git")
    assert f.names("missing") == ()
    for name in ("c", "d"):
        assert error(lambda name=name: f.names(name)).problem.reason.startswith(  # type: ignore[misc]
            "expected text (comma-separated) or a list of texts, got ")


def test_mapping() -> None:
    f = fields({"headers": {"X": "1"}, "bad": "X: 1"})
    assert f.mapping("headers") == {"X": "1"} and f.mapping("missing") is None
    assert error(lambda: f.mapping("bad")).problem.reason == "expected a mapping, got 'X: 1'"


def test_fields_no_one_took_are_warned_by_name() -> None:
    f = fields({"command": "x", "pipe_output": True, "comand": "y"})
    f.text("command")
    assert f.unknown() == ("agent.hooks[0]: unknown key 'pipe_output' ignored",
                           "agent.hooks[0]: unknown key 'comand' ignored")


def test_a_hostile_value_is_shown_cut_short_and_on_one_line() -> None:
    f = fields({"command": ["x" * 10_000, "\nerror: forged"], "k\nerror: y": 1})
    reason = error(lambda: f.text("command")).problem.reason
    assert len(reason) < 100 and reason.endswith("…") and "\n" not in reason
    [warning] = f.unknown()
    assert "\n" not in warning and "'k\\nerror: y'" in warning
    wide = fields({"command": ["x" * 10_000]}, width=200)
    assert 200 < len(error(lambda: wide.text("command")).problem.reason) < 240


@given(st.dictionaries(st.text(max_size=8), st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=10), max_size=6))
def test_any_entry_is_a_value_or_a_load_error(data: dict[str, object]) -> None:
    """Whatever the agent writes, each checker returns or raises LoadError, never
    another exception (a TypeError would end a loader, and every hook with it)."""
    for take in (lambda f, n: f.text(n), lambda f, n: f.flag(n, False),
                 lambda f, n: f.number(n, 1.0), lambda f, n: f.number(n, 1.0, whole=True),
                 lambda f, n: f.choice(n, ("a", "b"), "a"), lambda f, n: f.names(n),
                 lambda f, n: f.mapping(n)):
        for name in [*data, "missing"]:
            try:
                take(fields(data), name)
            except LoadError as err:
                assert err.problem.path == FILE and "\n" not in str(err.problem)
