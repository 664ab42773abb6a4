"""A problem of a file initd reads (initd/config/problems.py), as one line."""

from __future__ import annotations

from initd.config.problems import ERROR, NOTE, WARNING, LoadError, Problem


def test_problem_text() -> None:
    assert str(Problem("/f", "a.b", "why")) == "/f: a.b: why"
    assert str(Problem("/f", None, "why", ERROR)) == "/f: why"


def test_a_problem_is_one_line_whatever_the_agent_named() -> None:
    """A file called "x\\nerror: forged" stays one line of `initd hooks check` (its text,
    for a message built on, keeps it as written)."""
    forged = Problem("/ws/x\nerror: forged", "k\r", "why", WARNING)
    assert "\n" not in str(forged) and "\r" not in forged.line()
    assert forged.line() == "warning: /ws/x\\nerror: forged: k\\r: why"
    assert forged.text == "/ws/x\nerror: forged: k\r: why"


def test_what_is_no_files_has_no_path() -> None:
    assert Problem("", None, "no bash in this image", NOTE).line() == \
        "note: no bash in this image"


def test_a_load_error_carries_its_problem() -> None:
    err = LoadError("expected a number > 0, got -1", "/ws/a.toml", "hooks[0].timeout")
    assert isinstance(err, ValueError)
    assert err.problem == Problem("/ws/a.toml", "hooks[0].timeout",
                                  "expected a number > 0, got -1", ERROR)
    assert str(err) == "/ws/a.toml: hooks[0].timeout: expected a number > 0, got -1"
    assert str(LoadError("bad")) == "bad" and LoadError("bad").problem.key is None
