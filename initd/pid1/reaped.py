"""PID 1's count of what it reaped, for the supervisor's ``/metrics``
(``initd_zombies_reaped_total``): one anonymous shared page (``mmap``, ``MAP_SHARED``),
made before PID 1 forks the supervisor, which inherits the same page and reads it.

PID 1's cost per reap is an integer added; once per pass of its reap loop, 8 bytes
written. No lock: PID 1 is the only writer, and a reader that finds two reads in a row
disagreeing (a write half-way) reads again. No process the agent runs has the page: the
supervisor's children are exec'd (an exec drops every mapping), and it is anonymous, so
no path leads to it.

Made only when a scrape may come (cli.py's glance, ``may_scrape``): ``mmap`` is a shared
library to load, and a plain ``initd -- CMD`` has no probe port to ask."""

from __future__ import annotations

SIZE = 8  # one unsigned 64-bit count, little-endian
READS = 4  # tries at two equal reads in a row before the last one is taken

shared: Reaped | None = None  # the page PID 1 made, in PID 1 and, inherited, the supervisor


class Reaped:
    def __init__(self) -> None:
        import mmap  # (only here: a plain start never loads it)

        self.page = mmap.mmap(-1, SIZE, flags=mmap.MAP_SHARED)  # (-1: anonymous)
        self.count = 0  # PID 1's own: what it wrote last

    def add(self, reaped: int) -> None:
        """PID 1: ``reaped`` more (once per pass of its loop, never per process)."""
        self.count += reaped
        self.page[:SIZE] = self.count.to_bytes(SIZE, "little")

    def read(self) -> int:
        """The supervisor: the count PID 1 last wrote."""
        last = int.from_bytes(self.page[:SIZE], "little")
        for _ in range(READS):
            now = int.from_bytes(self.page[:SIZE], "little")
            if now == last:
                break
            last = now
        return last


def make() -> Reaped:
    """The page, made before the fork and kept as ``shared`` for the supervisor."""
    global shared
    shared = Reaped()
    return shared
