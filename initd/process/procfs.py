"""Processes as /proc shows them: state, process group, session, start time, uids, and
what they use (CPU, resident memory).

Read-only, and one file per question, no psutil: a pid alone may have been reused, so
the callers that act on a process (proc, leftovers, rootleftovers) ask here who it really is
first; signal_if then signals it only while it still is.
"""

from __future__ import annotations

import errno
import os
import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

# At the descriptor limit a read fails as if the process were gone. A caller that must not
# take "cannot look" for "gone" (the sweep of root's leftovers) asks ``strict``: then
# these raise, and it waits for a descriptor.
LIMITS = (errno.EMFILE, errno.ENFILE)


def proc_groups() -> list[tuple[str, int]]:
    """(state, process group) of every process, from /proc/PID/stat."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = stat_fields(name)
            if fields is not None:
                found.append((fields[0].decode(), int(fields[2])))
    return found


def stat_fields(pid: int | str, strict: bool = False) -> list[bytes] | None:
    """/proc/PID/stat from field 3 (state) on; None once the process is gone. The command
    name may hold spaces and parentheses: split after the last ')'."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except OSError as err:
        if strict and err.errno in LIMITS:
            raise
        return None
    except IndexError:
        return None


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot: with the pid, who it really is
    (a pid alone may have been reused)."""
    fields = stat_fields(pid)
    return int(fields[19]) if fields is not None else None  # field 22, starttime


def usage(pid: int) -> tuple[float, int] | None:
    """``pid``'s CPU seconds so far (user and system, its own: not its waited-for
    children's) and its resident memory in bytes, from /proc/PID/stat and
    /proc/PID/statm; None once it is gone."""
    fields = stat_fields(pid)
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            resident = int(f.read().split()[1])
        if fields is None:
            return None
        ticks = int(fields[11]) + int(fields[12])  # fields 14 and 15: utime, stime
    except (OSError, ValueError, IndexError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK"), resident * os.sysconf("SC_PAGE_SIZE")


def real_uid(pid: int) -> int | None:
    """The real uid of ``pid`` (None once it is gone)."""
    found = uids(pid)
    return found[0] if found else None


def uids(pid: int, strict: bool = False) -> tuple[int, ...]:
    """The real, effective, saved and file-system uids of ``pid`` (() once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Uid:"):
                    return tuple(int(uid) for uid in line.split()[1:5])
    except OSError as err:
        if strict and err.errno in LIMITS:
            raise
    except (ValueError, IndexError):
        pass
    return ()


def command(pid: int, limit: int = 200) -> str:
    """``pid``'s command line, NULs as spaces, cut at ``limit`` characters ("" once gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(limit + 1)
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()[:limit]


def children_listed() -> bool:
    """Whether this kernel lists a task's children (CONFIG_PROC_CHILDREN: off in some
    minimal and micro-VM kernels); without it, ``parents`` is the way."""
    return os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def parents() -> dict[int, tuple[int, str]]:
    """Every live process: {pid: (its parent's pid, its state)}, one listing of /proc.
    At the descriptor limit it raises (LIMITS)."""
    found = {}
    for name in os.listdir("/proc"):
        fields = stat_fields(name, strict=True) if name.isdigit() else None
        if fields is not None and fields[0] not in (b"Z", b"X"):
            found[int(name)] = (int(fields[1]), fields[0].decode())
    return found


def children(pid: int) -> list[int]:
    """The children of every thread of ``pid`` ([] once it is gone). At the descriptor
    limit it raises (LIMITS): "cannot look" is not "none"."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError as err:
        if err.errno in LIMITS:
            raise
        return []
    found = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as f:
                found += [int(child) for child in f.read().split()]
        except OSError as err:
            if err.errno in LIMITS:
                raise
    return found


PRIVILEGES = (b"Uid:", b"CapInh:", b"CapPrm:", b"CapEff:", b"CapAmb:")


def privileged(pid: int) -> bool:
    """uid 0 among its real, effective, saved and file-system uids, or any capability
    (an ambient or kept one included: root's powers under another uid). False once it is
    gone; at the descriptor limit it raises (LIMITS)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            lines = [line.split() for line in f if line.startswith(PRIVILEGES)]
    except OSError as err:
        if err.errno in LIMITS:
            raise
        return False
    for words in lines:
        if words[0] == b"Uid:" and b"0" in words[1:5]:
            return True
        if words[0] != b"Uid:" and int(words[1], 16) != 0:
            return True
    return False


def signal_if(pid: int, still: Callable[[], bool], sig: int) -> bool:
    """``sig`` to ``pid`` through a pidfd opened while ``still()`` held, so a process that
    has left, or a pid reused since, is never hit. At the descriptor limit (no pidfd, and
    no descriptor to look with either) through its pid, as the scan just saw it: a process
    left running would be worse than a race over the milliseconds since, which a pid could
    only lose by wrapping around."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError as err:
        if err.errno not in LIMITS:
            return False  # gone
        try:
            os.kill(pid, sig)
            return True
        except OSError:
            return False
    try:
        if still():  # still that process, still there
            signal.pidfd_send_signal(pidfd, sig)
            return True
    except OSError:
        pass  # exited meanwhile
    finally:
        os.close(pidfd)
    return False
