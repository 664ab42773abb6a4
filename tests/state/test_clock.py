"""Times as initd writes them (initd/state/clock.py): ISO 8601, UTC, milliseconds."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from initd.state import clock


@pytest.mark.parametrize(("when", "text"), [
    (0.0, "1970-01-01T00:00:00.000Z"), (1764040116.513, "2025-11-25T03:08:36.513Z"),
    (1.9999, "1970-01-01T00:00:01.999Z"),  # cut, never rounded up to the next second
])
def test_iso(when: float, text: str) -> None:
    assert clock.iso(when) == text


def test_now_is_that_form_and_parses_back() -> None:
    now = clock.now_iso()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", now)
    parsed = datetime.strptime(now, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    assert parsed.year >= 2024
