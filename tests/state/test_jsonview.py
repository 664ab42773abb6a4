"""initd's results as JSON, in one casing (initd/state/jsonview.py): a record's field
names camelCase, a mapping's keys as they are (they are data), an enum its value."""

from __future__ import annotations

import enum
from typing import NamedTuple

import pytest

from initd.state import jsonview


class Kind(enum.StrEnum):
    FILE = "file"


class Inner(NamedTuple):
    last_exit_code: int
    kind: Kind


class Outer(NamedTuple):
    hook_id: str
    inner: Inner
    items: list[Inner]
    payload: dict[str, object]


@pytest.mark.parametrize(("name", "camel"), [
    ("exit_code", "exitCode"), ("id", "id"), ("last_exit_code", "lastExitCode"),
    ("continue_", "continue"), ("a__b", "aB"), ("", "")])
def test_camel(name: str, camel: str) -> None:
    assert jsonview.camel(name) == camel


def test_a_record_in_one_casing_and_data_as_it_is() -> None:
    made = Outer("h", Inner(2, Kind.FILE), [Inner(0, Kind.FILE)],
                 {"tool_input": {"file_path": "/a"}, "k": Inner(1, Kind.FILE)})
    assert jsonview.view(made) == {
        "hookId": "h", "inner": {"lastExitCode": 2, "kind": "file"},
        "items": [{"lastExitCode": 0, "kind": "file"}],
        "payload": {"tool_input": {"file_path": "/a"},
                    "k": {"lastExitCode": 1, "kind": "file"}}}
    assert jsonview.view((1, "a")) == [1, "a"] and jsonview.view(None) is None
