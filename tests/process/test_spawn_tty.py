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


def talk(argv: list[str], send: bytes, expect: bytes, ready: bytes = b"",
         timeout: float = 30) -> bytes:
    """Run ``argv`` as the session leader of a fresh pty (as a runtime's -t does); once
    it has written ``ready``, type ``send``, and read until ``expect`` (or the deadline).
    (Typed early, a line waits in the terminal until CMD reads it.)"""
    pid, master = pty.fork()
    if pid == 0:
        os.execv(sys.executable, [sys.executable, *argv])
    seen = b""
    sent = False
    deadline = time.monotonic() + timeout
    try:
        while expect not in seen and time.monotonic() < deadline:
            if not sent and ready in seen:
                os.write(master, send)
                sent = True
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
    out = talk(["-m", "initd", "--", "sh", "-c", script], b"\x03", b"caught-int",
               ready=b"waiting")  # its trap is set: a Ctrl-C before it would end it
    assert b"caught-int" in out, out
