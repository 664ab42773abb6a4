"""Processes as /proc shows them: state, process group, session, start time, uids.

Read-only, and one file per question, no psutil: a pid alone may have been reused, so
the callers that act on a process (proc, leftovers) ask here who it really is first.
"""

from __future__ import annotations

import errno
import os

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
