"""An interactive CMD on a terminal (`podman run -it`): it owns the foreground.

CMD runs in its own process group; unless initd makes that group the terminal's
foreground group (tini's tcsetpgrp), the first read from the TTY stops CMD with SIGTTIN.
"""

from __future__ import annotations

import os
import pty
import select
import sys
import time


def talk(argv: list[str], send: bytes, expect: bytes, timeout: float = 10) -> bytes:
    """Run ``argv`` as the session leader of a fresh pty (as a runtime's -t does)."""
    pid, master = pty.fork()
    if pid == 0:
        os.execv(sys.executable, [sys.executable, *argv])
    seen = b""
    deadline = time.monotonic() + timeout
    try:
        time.sleep(0.5)  # let CMD reach its read
        os.write(master, send)
        while expect not in seen and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    seen += os.read(master, 1024)
                except OSError:
                    break
        return seen
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(master)


def test_interactive_cmd_reads_the_terminal() -> None:
    out = talk(["-m", "initd", "--", "sh", "-c", "read line; echo got:$line"],
               b"hello\n", b"got:hello")
    assert b"got:hello" in out, out


def test_ctrl_c_reaches_the_foreground_cmd() -> None:
    script = "trap 'echo caught-int; exit 0' INT; echo waiting; read line; sleep 5"
    out = talk(["-m", "initd", "--", "sh", "-c", script], b"\x03", b"caught-int")
    assert b"caught-int" in out, out
