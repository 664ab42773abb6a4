"""``initd [OPTIONS] -- CMD [ARGS...]``: become the reaper at once, let the supervisor do the rest.

This module runs in PID 1, which keeps its imports to the standard library's smallest
pieces for the container's whole life: the options are parsed after the fork, in the
boot. One error boundary on each side: an InitdError is one line on stderr and
exit 125, as tini and docker use 125 for "the init itself failed".
"""

from __future__ import annotations

import os
import sys

from initd import VERBS
from initd.errors import InitdError

TYPE_CHECKING = False
if TYPE_CHECKING:  # PID 1's module is imported where PID 1 runs: a verb needs neither it
    # nor what it brings (signal, enum), nor collections.abc: an exec probe's cost
    from collections.abc import Callable, Mapping, Sequence

    from initd.pid1 import log as pid1log


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] and args[0] in VERBS:  # a verb runs as an ordinary process: no fork
        return guarded(lambda: _verb(args))
    from initd.pid1 import reaper

    try:
        reaps = None
        if may_scrape(args, os.environ):  # (the page before the fork: both sides have it)
            from initd.pid1 import reaped

            reaps = reaped.make()
        code = reaper.run(lambda: guarded(lambda: _supervise(args)), pid1_log(args, os.environ),
                          reaps=reaps)
    except InitdError as err:
        return fail(err)
    # Everything is reaped and said: exit now, as tini does. The interpreter's own
    # shutdown (module teardown, a final GC) is work of every container's stop that
    # nothing needs: PID 1 registers no atexit handler and holds nothing to flush but
    # stderr.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def guarded(body: Callable[[], int]) -> int:
    """The error boundary of the supervisor side (it runs in the forked child)."""
    try:
        return body()
    except InitdError as err:
        return fail(err)
    except BrokenPipeError:  # (`initd shim claude | head`: the reader had enough)
        return 141  # 128 + SIGPIPE, as a program the signal ended (signal is not imported)


def fail(err: InitdError) -> int:
    from initd.pid1.log import write_line

    write_line(f"initd: {err}")
    return err.exit_code


def pid1_log(argv: Sequence[str], environ: Mapping[str, str]) -> pid1log.Log:
    """PID 1's verbosity and log format, from a glance at the options (argparse would cost
    PID 1 its memory budget). Only PID 1's own few lines depend on this glance."""
    options = argv[: argv.index("--")] if "--" in argv else argv
    verbose = sum(opt.count("v") for opt in options
                  if opt.startswith("-") and not opt.startswith("--") and set(opt[1:]) == {"v"})
    verbose += options.count("--verbose")
    if not verbose and environ.get("INITD_VERBOSE", "").isdigit():
        verbose = int(environ["INITD_VERBOSE"])
    fmt = environ.get("INITD_LOG_FORMAT", "auto")
    for i, opt in enumerate(options):
        if opt == "--log-format" and i + 1 < len(options):
            fmt = options[i + 1]
        elif opt.startswith("--log-format="):
            fmt = opt.split("=", 1)[1]
    from initd.pid1.log import Log

    return Log(verbose=verbose, json_lines=None if fmt == "auto" else fmt == "json")


DEFAULT_CONFIG = "/etc/initd/initd.yaml"  # config/paths.py's (PID 1 imports no config)
# what may turn the probe port on besides a flag: its variable, a config file, env files
SCRAPE_VARIABLES = ("INITD_HEALTH_PORT", "INITD_CONFIG", "INITD_ENV_FILE")


def may_scrape(argv: Sequence[str], environ: Mapping[str, str],
               config: str = DEFAULT_CONFIG) -> bool:
    """Whether the probe port (and so /metrics, with PID 1's count of what it reaped,
    pid1/reaped.py) may be on, from a glance: a long option other than --user, a
    variable that may set it, or the image's config file. A wrong yes costs PID 1 a page;
    a wrong no, that count (never a crash)."""
    options = argv[: argv.index("--")] if "--" in argv else argv
    if any(opt.startswith("--") and not opt.startswith("--user") for opt in options):
        return True
    return any(name in environ for name in SCRAPE_VARIABLES) or os.path.exists(config)


def _verb(argv: list[str]) -> int:
    if argv[0] in ("ready", "health") and len(argv) <= 5:  # an exec probe's plain form
        from initd.commands import probe

        code = probe.run(argv[0], argv[1:])
        if code is not None:
            return code
    module, function = VERBS[argv[0]]
    __import__(f"initd.commands.{module}")  # (importlib itself imports warnings)
    verb: Callable[[list[str]], int] = getattr(sys.modules[f"initd.commands.{module}"],
                                               function)
    return verb(argv[1:])


def _supervise(argv: list[str]) -> int:
    from initd.commands import supervise  # heavy imports happen here, after the fork

    return supervise.main(argv)
