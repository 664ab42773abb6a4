"""Per-hook resource limits, set with setrlimit in the hook's own process before it runs.

CPython's subprocess has no place to call setrlimit in the child but ``preexec_fn``,
which may deadlock in a process with threads (the hook service has several). So a hook
with limits is started through a trampoline: this same interpreter, isolated and
without site (``-I -S -c``), sets the limits, gives SIGPIPE and SIGXFSZ back their
default (Python ignores both at its start, and a hook must not inherit that), and execs
the hook in place: the same pid, the same process group, so its timeout and its stop
are what they always are. It costs a Python start, paid only by hooks that have
limits.

What each limit does (``man 2 setrlimit``):

- ``cpu``: seconds of CPU time; at them the kernel sends SIGXCPU (which ends a process
  with the default disposition), a second later SIGKILL. Reported as the limit.
- ``memory``: bytes of address space (RLIMIT_AS); an allocation past it fails, and the
  hook says so itself (MemoryError, "Cannot allocate memory").
- ``processes``: processes (and threads) of the hook's *user*, all of them, counted by
  the kernel at each fork: a fork past it fails with EAGAIN. A hook with
  CAP_SYS_ADMIN or CAP_SYS_RESOURCE (a ``run_as: root`` hook, usually) is not held to it.
- ``file_size``: bytes any one file the hook writes may grow to; past them SIGXFSZ.
  Reported as the limit.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from initd.errors import InitdError

if TYPE_CHECKING:
    from collections.abc import Sequence

RESOURCES = {"cpu": "RLIMIT_CPU", "memory": "RLIMIT_AS", "processes": "RLIMIT_NPROC",
             "file_size": "RLIMIT_FSIZE"}
UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
MOST = 2**62  # setrlimit takes a C long; past this, "unlimited" is what was meant anyway

# The trampoline: ``python -I -S -c TRAMPOLINE NAME=SOFT:HARD... -- ARGV...``. A limit
# above the process's own hard limit is set at that hard limit (only root could raise
# it, and initd never runs hooks with CAP_SYS_RESOURCE in mind).
TRAMPOLINE = """\
import os, resource, signal, sys
args = sys.argv[1:]
cut = args.index('--')
for item in args[:cut]:
    name, value = item.split('=')
    which = getattr(resource, name)
    soft, hard = (int(v) for v in value.split(':'))
    top = resource.getrlimit(which)[1]
    if top != resource.RLIM_INFINITY:
        soft, hard = min(soft, top), min(hard, top)
    resource.setrlimit(which, (soft, hard))
for name in ('SIGPIPE', 'SIGXFSZ'):
    signal.signal(getattr(signal, name), signal.SIG_DFL)
argv = args[cut + 1:]
try:
    os.execvp(argv[0], argv)
except OSError as err:
    sys.stderr.write(f'{argv[0]}: {err.strerror}\\n')
    os._exit(127 if err.errno in (2, 20) else 126)
"""


class LimitError(InitdError):
    pass


class Limits(NamedTuple):
    cpu: int | None = None  # seconds
    memory: int | None = None  # bytes
    processes: int | None = None
    file_size: int | None = None  # bytes

    def any(self) -> bool:
        return any(value is not None for value in self)

    def over(self, default: Limits) -> Limits:
        """These limits, each one not given taken from ``default`` (the image's)."""
        return Limits(*(own if own is not None else base for own, base in zip(self, default,
                                                                             strict=True)))

    def describe(self) -> str:
        return ", ".join(f"{name} {_shown(name, value)}" for name, value in
                         self._asdict().items() if value is not None)


NONE = Limits()


def parse(value: object) -> Limits:
    """``limits:`` as written (front matter, initd.yaml): a mapping of cpu (seconds),
    memory and file_size (bytes, or a number with K, M, G or T), processes."""
    if value is None:
        return NONE
    if not isinstance(value, Mapping):
        raise LimitError(f"limits: expected a mapping of {', '.join(RESOURCES)}, got "
                         f"{type(value).__name__}")
    unknown = [str(key) for key in value if key not in RESOURCES]
    if unknown:
        raise LimitError(f"limits: unknown {', '.join(unknown)} (known: "
                         f"{', '.join(RESOURCES)})")
    return Limits(**{str(key): _amount(str(key), item) for key, item in value.items()})


def parse_text(text: str) -> Limits:
    """The environment's form, ``cpu=60,memory=2G``: what text() writes."""
    pairs = [item.partition("=") for item in text.split(",") if item.strip()]
    bad = [item for item, eq, _ in pairs if not eq]
    if bad:
        raise LimitError(f"limits: expected NAME=VALUE[,NAME=VALUE...], got {text!r}"[:200])
    return parse({name.strip(): value.strip() for name, _, value in pairs})


def text(lim: Limits) -> str:
    return ",".join(f"{name}={value}" for name, value in lim._asdict().items()
                    if value is not None)


def _amount(key: str, value: object) -> int:
    sized = key in ("memory", "file_size")
    if isinstance(value, bool):
        value = None  # (True is an int to Python, not to a reader)
    amount = None
    if isinstance(value, int):
        amount = value
    elif isinstance(value, str):
        import re  # only a limit written as text: a plain start never loads it

        pattern = r"\s*(\d{1,30})\s*([KMGT]?)i?B?\s*" if sized else r"\s*(\d{1,30})()\s*"
        match = re.fullmatch(pattern, value, re.IGNORECASE)
        if match:
            amount = int(match[1]) * UNITS[match[2].upper()]
    if amount is not None and amount > MOST:
        raise LimitError(f"limits: {key}: at most {MOST}, got {str(value)[:40]}")
    if amount is not None and amount > 0:
        return amount
    what = "bytes > 0, or a number with K, M, G or T" if sized else "a whole number > 0"
    raise LimitError(f"limits: {key}: expected {what}, got {value!r}"[:200])


def wrap(argv: Sequence[str], limits: Limits) -> tuple[str, ...]:
    """``argv`` started through the trampoline that sets ``limits`` (as is, without)."""
    if not limits.any():
        return tuple(argv)
    settings = [f"{RESOURCES[name]}={value}:{value + 1 if name == 'cpu' else value}"
                for name, value in limits._asdict().items() if value is not None]
    return (sys.executable, "-I", "-S", "-c", TRAMPOLINE, *settings, "--", *argv)


def killed_by(returncode: int, limits: Limits) -> str | None:
    """The limit that ended a hook, said for people, or None: from its Popen returncode,
    -S when the signal killed it, 128+S when it was a shell's child the signal killed
    (``head -c 3G > f`` in a script: the shell goes on and exits 128+SIGXFSZ)."""
    sig = -returncode if returncode < 0 else returncode - 128 if returncode > 128 else None
    if sig == signal.SIGXCPU and limits.cpu is not None:
        return f"its cpu limit ({limits.cpu} s of CPU)"
    if sig == signal.SIGXFSZ and limits.file_size is not None:
        return f"its file_size limit ({_shown('file_size', limits.file_size)})"
    return None


def _shown(name: str, value: int) -> str:
    if name == "cpu":
        return f"{value} s"
    if name == "processes":
        return str(value)
    for unit in ("T", "G", "M", "K"):
        if value % UNITS[unit] == 0:
            return f"{value // UNITS[unit]} {unit}iB"
    return f"{value} bytes"
