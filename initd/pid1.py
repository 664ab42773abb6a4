"""The reaper tier: the process that is PID 1 for the container's whole life.

Standard library only, and small: this process lives as long as the container. It has
exactly one child, the supervisor (forked, so heavy imports happen only over there), and
it is the only place in initd that calls ``waitpid(-1)`` (DESIGN.md invariant 1: a
``waitpid(-1)`` loop beside ``subprocess`` steals exit statuses, and CPython then
reports a failed child as exit 0).

The loop is tini's and dumb-init's: block the signals we handle, wait for one with
``sigtimedwait``, then reap every exited child until none is left, on every wake-up and
never capped (supervisord's cap of 100 per pass left thousands of zombies).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable

from initd.errors import InitdError

# dumb-init's forwarding set: every catchable signal except the job-control stops (which
# PID 1 ignores), SIGCHLD (ours), and the synchronous faults (ILL TRAP ABRT BUS FPE SEGV
# SYS), which only ever mean "this process crashed" and are not messages for the child.
FORWARDED = frozenset(
    {
        signal.SIGHUP,
        signal.SIGINT,
        signal.SIGQUIT,
        signal.SIGUSR1,
        signal.SIGUSR2,
        signal.SIGALRM,
        signal.SIGTERM,
        signal.SIGCONT,
        signal.SIGURG,
        signal.SIGWINCH,
        signal.SIGIO,
        signal.SIGPWR,
        signal.SIGVTALRM,
        signal.SIGPROF,
        signal.SIGXCPU,
        signal.SIGSTKFLT,
    }
)
JOB_CONTROL = (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU)
WAITED = FORWARDED | {signal.SIGCHLD}

# tini wakes at least once a second so a coalesced or lost SIGCHLD never hangs it.
WAKE_INTERVAL = 1.0
# After the supervisor exits: TERM to everything left, this long, then KILL. The
# supervisor has already given the agent its full --grace; this is for stragglers.
SWEEP_GRACE = 2.0
PR_SET_CHILD_SUBREAPER = 36


class Log:
    """PID 1's few log lines: JSON for machines, ``initd: …`` for people. No structlog here."""

    def __init__(self, verbose: int = 0, json_lines: bool | None = None) -> None:
        self.verbose = verbose
        self.json_lines = (not sys.stderr.isatty()) if json_lines is None else json_lines

    def __call__(self, level: int, event: str, **fields: object) -> None:
        if level > self.verbose:
            return
        name = ("warning", "info", "debug")[min(level, 2)]
        if self.json_lines:
            import json  # imported on demand: PID 1's resident size is a budget

            line = json.dumps({"event": event, "level": name, "logger": "pid1", **fields})
        else:
            line = "initd: " + " ".join([event, *(f"{k}={v}" for k, v in fields.items())])
        write_line(line)


def write_line(line: str) -> None:
    """One write per line: CMD shares our stderr, and print() writes the newline
    separately when PYTHONUNBUFFERED=1, which lets CMD's output land inside our line."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # stderr is a closed pipe (a log collector gone): the line, not initd, is lost


WARN, INFO, DEBUG = 0, 1, 2


def run(supervisor: Callable[[], int], log: Log | None = None,
        sweep_grace: float = SWEEP_GRACE) -> int:
    """Fork ``supervisor``, reap and forward until it exits, sweep, return its exit code.

    ``supervisor`` runs in the child with default signal dispositions but with the
    forwarded signals still blocked: it must install its handlers and then unblock
    (``sigchan.SignalChannel``), so a signal arriving while it imports is delayed, not fatal.
    """
    log = log or Log()
    is_pid1 = os.getpid() == 1
    if not is_pid1:
        become_subreaper(log)
    _take_signals()
    try:
        pid = os.fork()
    except OSError as err:
        raise InitdError(f"cannot fork the supervisor: {err.strerror}") from err
    if pid == 0:
        os._exit(_child(supervisor))
    # Like dumb-init: PID 1 holds no directory busy (the supervisor keeps the cwd).
    os.chdir("/")
    status = _reap_until(pid, log)
    code = exit_code(status)
    if os.WIFSIGNALED(status):  # (kill -9 by someone, the OOM killer): say so, once
        name = _signal_name(os.WTERMSIG(status))
        write_line(f"initd: initd's own supervisor was killed by {name}: stopping "
                   f"everything it ran; exit {code}")
    log(INFO, "supervisor exited", code=code)
    _sweep(is_pid1, sweep_grace, log)
    return code


def become_subreaper(log: Log) -> bool:
    """Adopt orphaned descendants like PID 1 would (catatonit does this automatically)."""
    import ctypes  # only needed off PID 1; keeps PID 1's start-up lean

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
        log(DEBUG, "not PID 1: running as child subreaper", pid=os.getpid())
        return True
    log(WARN, "not PID 1 and PR_SET_CHILD_SUBREAPER failed: orphans will not be reaped",
        errno=ctypes.get_errno())
    return False


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def exit_code(status: int) -> int:
    """A wait status as a shell would report it: N, or 128+S for a signal."""
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _take_signals() -> None:
    # Block first, so nothing is delivered between installing and blocking. A handler is
    # installed as well: the kernel drops a signal sent to PID 1 whose disposition is
    # SIG_DFL, and a blocked-but-default signal would be lost if it were ever unblocked.
    signal.pthread_sigmask(signal.SIG_BLOCK, WAITED)
    for sig in WAITED:
        signal.signal(sig, _never_called)
    for sig in JOB_CONTROL:
        signal.signal(sig, signal.SIG_IGN)


def _never_called(signum: int, frame: object) -> None:
    """Installed but blocked: PID 1 takes these with sigtimedwait, never via a handler."""


def _child(supervisor: Callable[[], int]) -> int:
    code = 125
    try:
        _default_dispositions()
        code = supervisor()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 125)
    except BaseException:
        import traceback

        traceback.print_exc()
        write_line("initd: internal error in the supervisor (traceback above)")
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass  # a closed stdout must not turn a good exit code into a crash
    return code


def _default_dispositions() -> None:
    # Whatever our parent left ignored (tini's sigconf test ignores INT and TTOU) must not
    # reach the agent. SIGPIPE and SIGXFSZ stay ignored as CPython set them; subprocess's
    # restore_signals gives children the default again.
    for sig in signal.valid_signals():
        if sig in (signal.SIGKILL, signal.SIGSTOP):
            continue
        keep_ignored = sig in (signal.SIGPIPE, signal.SIGXFSZ)
        try:
            signal.signal(sig, signal.SIG_IGN if keep_ignored else signal.SIG_DFL)
        except (OSError, ValueError):
            continue  # 32 and 33: glibc's wrapper refuses them; see below
    _default_glibc_reserved()
    # Only the forwarded signals stay blocked until the supervisor has handlers for them.
    signal.pthread_sigmask(signal.SIG_SETMASK, FORWARDED)


# rt_sigaction by syscall number: glibc's sigaction() rejects 32 and 33 with EINVAL.
RT_SIGACTION = {"x86_64": 13, "aarch64": 134}


def _default_glibc_reserved() -> None:
    """Set signals 32 and 33 back to SIG_DFL with the raw syscall.

    glibc 2.36's posix_spawn (used by GNU make, and by Popen in some cases) leaves them
    ignored in the child, and an ignored disposition survives exec: without this, an
    agent started from ``make`` would inherit ``SigIgn: 0000000180000000``.
    """
    number = RT_SIGACTION.get(os.uname().machine)
    if number is None or not _ignored_mask() & (1 << 31 | 1 << 32):
        return  # the usual case: nothing to undo, and no ctypes import (~3 ms) on boot
    import ctypes  # the supervisor side only: PID 1 never loads it for this

    libc = ctypes.CDLL(None, use_errno=True)
    # An all-zero kernel struct sigaction is SIG_DFL with no flags and an empty mask, in
    # both the x86_64 and the arm64 layout (handler, flags, restorer, mask).
    default = ctypes.create_string_buffer(32)
    for sig in (32, 33):
        libc.syscall(ctypes.c_long(number), ctypes.c_long(sig), default, None,
                     ctypes.c_long(8))


def _ignored_mask() -> int:
    """This process's ignored signals, as the kernel reports them (bit N-1 is signal N)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("SigIgn:"):
                return int(line.split()[1], 16)
    return 0


def _reap_until(supervisor: int, log: Log) -> int:
    """Forward signals and reap everything until the supervisor itself has exited."""
    while True:
        info = signal.sigtimedwait(WAITED, WAKE_INTERVAL)
        if info is not None and info.si_signo != signal.SIGCHLD:
            log(DEBUG, "forwarding signal", signal=signal.Signals(info.si_signo).name)
            try:
                os.kill(supervisor, info.si_signo)
            except ProcessLookupError:
                pass  # it has just exited; the reap below will see it
        # SIGCHLDs coalesce: look for the supervisor inside the reap loop, on every wake,
        # or we could wait forever for a notification that was merged away (catatonit#4).
        status = _reap(supervisor, log)
        if status is not None:
            return status


def _reap(watch: int, log: Log) -> int | None:
    """Reap every exited child; return the wait status of ``watch`` if it was among them."""
    found = None
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return found
        if pid == 0:
            return found
        if pid == watch:
            found = status
        else:
            log(DEBUG, "reaped", pid=pid, code=exit_code(status))


def _sweep(is_pid1: bool, grace: float, log: Log) -> None:
    """TERM whatever is left, wait up to ``grace``, then KILL until nothing is left.

    As PID 1 "everything" is the namespace (``kill(-1)``). As a subreaper it is only our
    own descendants: ``kill(-1)`` outside a PID namespace would hit the whole machine.
    """
    if _all_reaped(0):
        return
    _signal_rest(is_pid1, signal.SIGTERM)
    log(INFO, "sweeping leftover processes", signal="SIGTERM", grace=grace)
    if _all_reaped(grace):
        return
    log(INFO, "sweep grace over", signal="SIGKILL")
    # Repeat: a process may fork between our look at /proc and the signal. Bounded: what
    # we may not kill (no CAP_KILL over another uid) must not keep the container alive;
    # as PID 1 our own exit makes the kernel kill everything in the namespace.
    deadline = time.monotonic() + grace
    while True:
        _signal_rest(is_pid1, signal.SIGKILL)
        if _all_reaped(0.1):
            return
        if time.monotonic() >= deadline:
            log(WARN, "processes initd may not signal are left (no CAP_KILL?): exiting "
                "anyway" + (", which ends them" if is_pid1 else ""))
            return


def _all_reaped(timeout: float) -> bool:
    """Reap until no child is left (True) or ``timeout`` passes (False).

    As PID 1 or a subreaper, no child left means no descendant left: an orphan is
    re-parented to us before it can outlive its parent.
    """
    deadline = time.monotonic() + timeout
    while True:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                break
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        signal.sigtimedwait({signal.SIGCHLD}, min(left, WAKE_INTERVAL))


def _signal_rest(is_pid1: bool, sig: int) -> None:
    targets = [-1] if is_pid1 else descendants(os.getpid())
    for pid in targets:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass  # already gone (or, for -1, nothing left to signal)
        except PermissionError:
            pass  # not ours to signal (no CAP_KILL): the bounded sweep says so


def descendants(root: int) -> list[int]:
    """Every live descendant of ``root``, from one pass over /proc (no psutil in PID 1)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # exited while we looked
        # The command name may contain spaces and parentheses: split after the last ')'.
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found
