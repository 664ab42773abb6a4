"""Helpers for the hook tests."""

from __future__ import annotations

from initd.hooks.runner import Result


def result(code: int, path: str = "/tmp/x.log") -> Result:
    return Result(exit_code=code, signal=None, timed_out=False, cancelled=False, duration=0.1,
                  output_path=path, truncated=False, exec_error=None, head=b"", tail=b"",
                  lines=0)
