"""supervisor/notify.py: sd_notify's socket and s6's notification fd, for real. Only the
service's user can send to its socket (another user's sendto is refused by the kernel:
the socket file's mode), only READY=1 makes it ready, a STATUS= is kept cut, what a
former start sent is forgotten, and the fd a service asked for is the pipe's write end
at that number, ready at its first newline and done at its end.

References: systemd's sd_notify(3) (https://www.freedesktop.org/software/systemd/man/
latest/sd_notify.html, read 2026-11-28: "READY=1 Tells the service manager that service
startup is finished"; "STATUS=… Passes a single-line UTF-8 status string"), s6's
notification-fd (https://skarnet.org/software/s6/notifywhenup.html, read 2026-11-28:
"the daemon … writes a line … to file descriptor notification-fd … and closes it")."""

from __future__ import annotations

import os
import pwd
import socket
import subprocess

import pytest

from initd.supervisor.notify import MAX_STATUS, NotifyFd, NotifySocket

PYTHON = "/usr/bin/python3"  # (another user cannot run the pyenv one under /root)
SEND = ("import socket, sys\ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
        "s.sendto(sys.argv[2].encode(), sys.argv[1])")


def send_as(uid: int, path: str, text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                           PYTHON, "-c", SEND, path, text], capture_output=True, text=True)


def send(path: str, text: str) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
        s.sendto(text.encode(), path)


def test_ready_only_on_ready_1_and_status_kept_cut() -> None:
    made = NotifySocket("web", None)
    try:
        assert not made.ready()  # nothing sent
        send(made.path, "STATUS=" + "x" * 1000 + "\nREADY=0\nMAINPID=1")
        assert not made.ready() and made.status == "x" * MAX_STATUS
        send(made.path, "READY=1\nSTATUS=up")
        assert made.ready() and made.status == "up"
    finally:
        made.close()
    assert not os.path.exists(made.directory)


def test_what_a_former_start_sent_is_forgotten() -> None:
    made = NotifySocket("web", None)
    try:
        send(made.path, "READY=1")
        made.forget()
        assert not made.ready()
    finally:
        made.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="another user: root makes them")
def test_only_the_services_user_may_send() -> None:
    nobody = pwd.getpwnam("nobody").pw_uid
    made = NotifySocket("web", nobody)
    try:
        info = os.stat(made.path)
        assert (info.st_uid, info.st_mode & 0o777) == (nobody, 0o600)
        assert os.stat(made.directory).st_uid == 0  # root's: nobody moves it
        forged = send_as(54321, made.path, "READY=1")  # the agent, say
        assert forged.returncode != 0 and "PermissionError" in forged.stderr
        assert not made.ready()
        assert send_as(nobody, made.path, "READY=1").returncode == 0
        assert made.ready()
    finally:
        made.close()


def test_the_fd_a_service_asked_for_is_the_pipes_write_end() -> None:
    made = NotifyFd(7)
    argv, fds = made.wrap(("sh", "-c", "ls -l /proc/self/fd/7 >&2; echo ready >&7; sleep 0.1"))
    child = subprocess.Popen(argv, pass_fds=fds, stderr=subprocess.PIPE, text=True)
    made.started()
    _, err = child.communicate(timeout=60)
    assert child.returncode == 0 and "pipe:" in err
    assert made.ready()
    assert not made.ready() and made.ended  # its end: nothing more to read
    made.close()


def test_an_exit_without_a_line_is_no_readiness() -> None:
    made = NotifyFd(3)
    argv, fds = made.wrap(("true",))
    subprocess.run(argv, pass_fds=fds, check=True, timeout=60)
    made.started()
    assert not made.ready() and made.ended
    made.close()


def test_a_program_that_cannot_run_exits_as_exec_says() -> None:
    made = NotifyFd(3)
    argv, fds = made.wrap(("/no/such/program",))
    done = subprocess.run(argv, pass_fds=fds, capture_output=True, text=True, timeout=60)
    assert done.returncode == 127 and "/no/such/program" in done.stderr
    made.close()
