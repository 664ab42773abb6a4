"""A payload's values as a hook's environment (initd/events/variables.py): a value too big
for an environment, or with a NUL, is left out of it and said."""

from __future__ import annotations

import pytest

from initd.events import execsize, variables

BIG = "x" * (execsize.STRING_LIMIT + 1)


@pytest.mark.parametrize(("table", "env", "left"), [
    ({"A": "1"}, {"A": "1"}, None),
    ({"A": "1", "NUL": "a\0b"}, {"A": "1"}, "NUL"),
    ({"CONTENT": BIG, "A": "1"}, {"A": "1"}, "CONTENT"),
    ({"PATH": BIG}, {"PATH": "/bin"}, None),  # initd's own wins: nothing to leave out
    ({f"V{n}": "x" * (90_000 + n * 1000) for n in range(7)},  # 651 KB: over 512 KiB
     {f"V{n}": "x" * (90_000 + n * 1000) for n in range(5)}, "V5 V6"),  # the biggest go
])
def test_a_value_too_big_for_an_environment_is_left_out(
        table: dict[str, str], env: dict[str, str], left: str | None) -> None:
    made = variables.environment({"PATH": "/bin"}, table)
    assert made.pop(variables.LEFT_OUT, None) == left
    assert made == {"PATH": "/bin", **env}
