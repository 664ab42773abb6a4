"""errors.shown: the agent's values in a message are short, escaped, and cheap to make,
whatever the value (invariant 8): an alias bomb's structure, a forged log line, a
number of a million digits."""

from __future__ import annotations

import pytest

from initd.errors import shown


def bomb(levels: int) -> list[object]:
    """What yaml.safe_load makes of an alias bomb: one list referenced 9 times a level."""
    value: list[object] = ["lol"] * 9
    for _ in range(levels):
        value = [value] * 9
    return value


@pytest.mark.parametrize(("value", "expected"), [
    ("root", "'root'"),
    (None, "None"),
    (True, "True"),
    (1.5, "1.5"),
    ([1, "a"], "[1, 'a']"),
    ({"a": 1}, "{'a': 1}"),
    ("line\n{\"level\": \"info\"}", "'line\\n{\"level\": \"info\"}'"),  # no second line
    (10**400, "<a very large number>"),
    (object(), "<object>"),
])
def test_short_values_read_as_python_writes_them(value: object, expected: str) -> None:
    assert shown(value) == expected


@pytest.mark.parametrize("value", [bomb(30), "x" * 10**7, list(range(10**6)),
                                   {str(n): n for n in range(10**5)}])
def test_any_value_is_cut_at_the_limit(value: object) -> None:
    text = shown(value, 80)
    assert len(text) <= 81 and text.endswith("…")
    assert "\n" not in text
