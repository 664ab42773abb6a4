"""The variable table and a hook's environment (initd/events/variables.py): a payload's
value too big for exec is left out, and one surely too big is left out from its
strings' lengths alone, its text never made: a Write's 16 MiB file, or the tool input
that holds it, costs each hook's environment no copy of it (invariant 6). Measured with
tracemalloc, which counts what Python allocates."""

from __future__ import annotations

import tracemalloc

import pytest

from initd.events import execsize, variables

FILE = "line of a file\n" * (2**20)  # 15 MiB


@pytest.mark.parametrize(("value", "left"), [
    (FILE, True),
    ({"file_path": "a.py", "content": FILE}, True),  # its JSON would be over
    (["a", FILE], True),  # space-joined would be over
    ({"file_path": "a.py", "content": "x" * 1000}, False),
    ("x" * (execsize.STRING_LIMIT - 20), False),
    ("x" * execsize.STRING_LIMIT, True),  # (with its name, "=" and NUL: over)
])
def test_a_value_too_big_for_exec_is_left_out(value: object, left: bool) -> None:
    env = variables.environment({"PATH": "/bin"}, {"V": value})
    assert ("V" not in env and env[variables.LEFT_OUT] == "V") is left


def test_a_files_worth_is_left_out_without_a_copy() -> None:
    table = {"CONTENT": FILE, "TOOL_INPUT": {"file_path": "a.py", "content": FILE},
             "TOOL_NAME": "Write"}
    tracemalloc.start()
    try:
        env = variables.environment({"PATH": "/bin"}, table)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert env[variables.LEFT_OUT] == "CONTENT TOOL_INPUT" and env["TOOL_NAME"] == "Write"
    assert peak < 2**20, peak  # not one copy of the 15 MiB


def test_the_table_names_the_payloads_keys_in_upper_snake() -> None:
    from initd.events.context import EventContext
    from initd.hooks import kinds

    ctx = EventContext("/ws", "s1", "/state", {}, None, 1.0, None)  # type: ignore[arg-type]
    table = variables.table(kinds.BY_NAME["pre_tool"], {"toolName": "Bash", "EVENT": "x",
                                                        "9x": 1, "a-b": 2}, ctx)
    assert table["TOOL_NAME"] == "Bash" and table["EVENT"] == "pre_tool"
    assert table["A_B"] == 2 and "9X" not in table
