"""Which signals PID 1 takes and passes on, and the dispositions on each side of the fork.

PID 1 blocks what it forwards and waits for it with ``sigtimedwait`` (``take_signals``);
the supervisor it forks starts from default dispositions with only the forwarded signals
still blocked (``default_dispositions``), so whatever initd's own parent left ignored
never reaches the agent. Both halves live here, beside the one list of signals they
share. PID-1 tier: ``os`` and ``signal`` only;
``ctypes`` only after the fork, and only when there is something to undo.
"""

from __future__ import annotations

import os
import signal

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


def signal_name(sig: int) -> str:
    """``SIGTERM`` for 15; ``signal 35`` for a number with no name."""
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def take_signals() -> None:
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


def default_dispositions() -> None:
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
        return  # the usual case: nothing to undo, and no ctypes import on boot
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
