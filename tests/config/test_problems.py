"""A problem of a file initd reads (initd/config/problems.py), as one line."""

from __future__ import annotations

from initd.config.problems import ERROR, Problem


def test_problem_text() -> None:
    assert str(Problem("/f", "a.b", "why")) == "/f: a.b: why"
    assert str(Problem("/f", None, "why", ERROR)) == "/f: why"
