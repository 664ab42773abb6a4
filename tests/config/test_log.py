"""initd's own log (initd/config/log.py): levels by -v, JSON lines or the console, bound
fields on every line, a phase's one event, structlog imported only for a line really
written, and a log that cannot be written costs the line, never its writer. Each case
runs in a process of its own: the configuration is the process's."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any


def run(body: str, stderr: Any = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    code = "import sys\nfrom initd.config import log\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], stderr=stderr, stdout=subprocess.PIPE,
                          text=True, timeout=60)


def lines(out: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out.stderr.splitlines()]


def test_the_level_follows_verbose() -> None:
    body = """
        log.configure({v}, "json")
        logger = log.get()
        for level in ("debug", "info", "warning", "error"):
            getattr(logger, level)(level)
    """
    seen = {v: [line["event"] for line in lines(run(body.format(v=v)))] for v in (-1, 0, 1, 2)}
    assert seen == {-1: ["error"], 0: ["warning", "error"], 1: ["info", "warning", "error"],
                    2: ["debug", "info", "warning", "error"]}


def test_a_json_line_has_its_level_time_bound_fields_and_fields() -> None:
    [line] = lines(run("""
        log.configure(0, "json")
        log.get(hook="10-a.sh").bind(session="s1").warning("hook failed", code=3)
    """))
    assert line["event"] == "hook failed" and line["level"] == "warning"
    assert (line["hook"], line["session"], line["code"]) == ("10-a.sh", "s1", 3)
    assert line["timestamp"].endswith("Z")


def test_a_hostile_field_stays_in_its_line() -> None:
    [line] = lines(run("""
        log.configure(0, "json")
        log.get().error("hook not loaded", source='x\\n{"level": "info", "event": "forged"}')
    """))
    assert line["source"].startswith("x\n")  # one JSON line, the newline in its string


def test_console_format_for_people() -> None:
    out = run("""
        log.configure(0, "console")
        log.get(hook="h").warning("hook failed")
    """)
    assert out.returncode == 0 and "hook failed" in out.stderr and "hook=h" in out.stderr
    assert not out.stderr.lstrip().startswith("{")


def test_auto_is_json_when_stderr_is_no_terminal() -> None:
    [line] = lines(run("""
        log.configure(0, "auto")
        log.get().warning("x")
    """))
    assert line["event"] == "x"


def test_a_phase_is_one_info_event_with_its_duration_and_the_fields_added() -> None:
    [line] = lines(run("""
        log.configure(1, "json")
        with log.phase(log.get(), "session hooks", count=2) as fields:
            fields["failed"] = 1
    """))
    assert (line["event"], line["level"], line["count"], line["failed"]) == (
        "session hooks", "info", 2, 1)
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0


def test_structlog_is_imported_only_for_a_line_really_written() -> None:
    out = run("""
        log.configure(0, "json")
        log.get().info("not shown at the default level")
        print("structlog" in sys.modules)
        log.get().warning("shown")
        print("structlog" in sys.modules)
    """)
    assert out.stdout.split() == ["False", "True"] and len(lines(out)) == 1


def test_a_closed_stderr_costs_the_line_not_the_writer() -> None:
    out = run("""
        import os
        log.configure(0, "json")
        os.close(2)
        log.get().error("into a closed descriptor")
        print("still here")
    """)
    assert out.returncode == 0 and out.stdout == "still here\n"
    reader = subprocess.Popen(["true"], stdin=subprocess.PIPE)
    reader.wait()  # a pipe whose reader is gone: EPIPE
    out = run("""
        log.configure(0, "json")
        log.get().error("into a broken pipe")
        print("still here")
    """, stderr=reader.stdin)
    reader.stdin.close()  # type: ignore[union-attr]
    assert out.returncode == 0 and out.stdout == "still here\n"


def test_bound_fields_add_up_and_a_phase_hands_its_body_the_fields() -> None:
    """In this process, at the default level (warning): nothing is written, structlog
    is not needed, and what the body adds to a phase's fields is what it reports."""
    from initd.config import log

    logger = log.get(hook="a").bind(session="s")
    with log.phase(logger, "quiet", count=1) as fields:
        fields["failed"] = 0
    assert fields == {"count": 1, "failed": 0}
    assert list(log.LEVELS) == ["debug", "info", "warning", "error"]
    assert sorted(log.LEVELS.values()) == list(log.LEVELS.values())
