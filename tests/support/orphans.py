#!/usr/bin/env python3
"""An orphan storm: N double-forked children that all exit at the same moment.

Each grandchild is orphaned at once (its parent exits) and blocks on a shared pipe;
closing the pipe makes all of them exit together. Once every one has exited, we watch
their pids for --settle seconds: with a working reaper every one disappears; without
one they stay zombies (state Z). Prints ``zombies=K`` (K left after --settle seconds)
and exits 0 only when K is 0.
"""

import argparse
import os
import sys
import time


def state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:  # gone (reaped) while we looked
        return None
    return stat[stat.rindex(b")") + 2 :].split()[0].decode()


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("-n", type=int, default=1000)
    p.add_argument("--settle", type=float, default=5.0)
    p.add_argument("--ps", action="store_true", help="also count Z in `ps -A -o state`")
    p.add_argument("--pid1-cpu", action="store_true",
                   help="print PID 1's CPU seconds from the storm to the end (benchmark)")
    args = p.parse_args()
    gate_r, gate_w = os.pipe()
    for _ in range(args.n):
        child = os.fork()
        if child == 0:
            if os.fork() == 0:  # the grandchild: wait for the gate, then exit
                os.close(gate_w)
                os.read(gate_r, 1)
                os._exit(0)
            os._exit(0)  # the child exits at once: the grandchild is orphaned
        os.waitpid(child, 0)
    # Who are the orphans? Everything still blocked on our gate: read them from /proc.
    me = os.getpid()
    orphans = [int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) != me
               and _holds_gate(int(n), gate_r)]
    print(f"orphans={len(orphans)}", flush=True)
    cpu_before = pid1_cpu()
    os.close(gate_r)
    os.close(gate_w)  # the storm: every grandchild exits now
    # First let the storm happen: every orphan has exited (is a zombie or already gone).
    # Then give the reaper --settle seconds: zombies left after that are its failures.
    stormed = time.monotonic()
    deadline = stormed + 60
    while any(state(pid) not in (None, "Z") for pid in orphans) and time.monotonic() < deadline:
        time.sleep(0.01)
    print(f"storm_s={time.monotonic() - stormed:.3f}", flush=True)
    deadline = time.monotonic() + args.settle
    while True:
        left = [pid for pid in orphans if state(pid) == "Z"]
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    print(f"zombies={len(left)}", flush=True)
    if args.pid1_cpu:
        print(f"pid1_cpu={pid1_cpu() - cpu_before:.3f}", flush=True)
    if args.ps:
        states = os.popen("ps -A -o state=").read().split()
        print(f"ps_zombies={states.count('Z')}", flush=True)
    return 0 if not left else 1


def pid1_cpu() -> float:
    """User + system CPU seconds of this namespace's PID 1 so far."""
    with open("/proc/1/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _holds_gate(pid: int, gate_fd: int) -> bool:
    """Is ``pid`` one of our grandchildren (it has our gate pipe open as fd ``gate_fd``)?"""
    try:
        mine = os.readlink(f"/proc/self/fd/{gate_fd}")
        return os.readlink(f"/proc/{pid}/fd/{gate_fd}") == mine
    except OSError:
        return False


if __name__ == "__main__":
    sys.exit(main())
