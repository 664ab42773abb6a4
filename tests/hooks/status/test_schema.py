"""status.json's schema (initd/hooks/status/schema.py): what was read back made to fit
it, whatever the agent wrote there (a field of the wrong type once stopped a boot)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from initd.hooks.status import schema


def test_empty() -> None:
    assert schema.empty() == {"version": schema.VERSION, "hooks": {}, "pendingHooks": [],
                              "lastEvaluatedAt": None}
    assert schema.empty() is not schema.empty()


def test_what_does_not_fit_is_reset_nulled_or_dropped() -> None:
    read = {"version": 99, "extra": 1, "lastEvaluatedAt": 5, "pendingHooks": ["a", 1, None],
            "hooks": {"ok": {"runCount": 3, "type": "file", "lastExitCode": 1},
                      "bad": {"runCount": -1, "failCount": True, "consecutiveFailures": "2",
                              "type": ["a"], "hookName": 1, "pgid": 1.5, "runner": None},
                      "not-an-object": [1]}}
    clean = schema.clean(read)
    assert clean["version"] == schema.VERSION and clean["extra"] == 1
    assert clean["pendingHooks"] == ["a"] and clean["lastEvaluatedAt"] is None
    assert set(clean["hooks"]) == {"ok", "bad"}
    assert clean["hooks"]["ok"]["runCount"] == 3 and clean["hooks"]["ok"]["failCount"] == 0
    bad = clean["hooks"]["bad"]
    assert (bad["runCount"], bad["failCount"], bad["consecutiveFailures"]) == (0, 0, 0)
    assert (bad["type"], bad["hookName"], bad["pgid"], bad["runner"]) == (None,) * 4
    assert schema.clean({"hooks": []}) == schema.empty()


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=5), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=10)
FIELDS = st.sampled_from([*schema.COUNTERS, *schema.TEXTS, *schema.NUMBERS, "x"])


@given(st.dictionaries(st.sampled_from(["hooks", "pendingHooks", "lastEvaluatedAt", "v"]),
                       st.dictionaries(st.text(max_size=4),
                                       st.dictionaries(FIELDS, JSON, max_size=5) | JSON,
                                       max_size=3) | JSON, max_size=4))
def test_anything_read_fits_the_schema(read: dict[str, Any]) -> None:
    clean = schema.clean(read)
    assert isinstance(clean["hooks"], dict) and all(isinstance(h, str)
                                                    for h in clean["pendingHooks"])
    for entry in clean["hooks"].values():
        assert all(type(entry[key]) is int and entry[key] >= 0 for key in schema.COUNTERS)
        assert all(entry.get(key) is None or isinstance(entry[key], str)
                   for key in schema.TEXTS)
        hash(tuple(entry.get(key) for key in schema.TEXTS))  # never unhashable
