"""The options of ``initd [OPTIONS] -- CMD [ARGS...]`` (argparse).

Parsed in the supervisor, not in PID 1: argparse and the settings module would cost
PID 1 about two megabytes of resident memory for the container's whole life. A usage
error is still exit 125, through PID 1.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import NoReturn

from initd import __version__
from initd.config import paths, settings, values
from initd.errors import UsageError

USAGE = "initd [OPTIONS] -- CMD [ARGS...]\n       initd VERB [ARGS...]  (initd VERB --help)"
EPILOG = """\
verbs (the first argument, before any option):
  hooks list|check|run|trust|output|rerun   the hooks, as initd sees them
  precommit install|uninstall|run         the managed git pre-commit chain
  status | health | ready                 the running initd (ready, health: probes)
  turn | emit EVENT                       end of an LLM turn; a lifecycle event
  sessions | config                       session records; set-auto-commit|push
  service                                 the hook service (initd starts it itself)

every option can also be set in the environment as INITD_<OPTION> (e.g. INITD_GRACE=5)
or in /etc/initd/initd.yaml; flags win over the environment, the environment over the file.

exit codes: CMD's code; 128+S when CMD is killed by signal S; 127 command not found;
126 command not executable; 125 initd's own error (one line says what to fix)."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see initd --help)")


def _formatter(prog: str) -> argparse.HelpFormatter:
    """argparse asks shutil for the width (shutil drags in bz2 and lzma), and
    add_argument builds a formatter for every option, on every boot. Ask os instead."""
    try:
        width = int(os.environ.get("COLUMNS", "")) or os.get_terminal_size().columns
    except (ValueError, OSError):
        width = 80
    return argparse.RawDescriptionHelpFormatter(prog, width=width - 2)


def parser() -> Parser:
    p = Parser(prog="initd", usage=USAGE, epilog=EPILOG, formatter_class=_formatter,
               description="PID 1 for coding-agent containers: reaps zombies, forwards "
                           "signals, runs workspace hooks, supervises CMD.")

    _agent_options(p.add_argument)
    _hook_options(p.add_argument)
    add = p.add_argument
    add("-v", "--verbose", action="count",
        help="-v logs every phase, -vv every detail (INITD_VERBOSE=1|2)")
    add("--log-format", metavar="FORMAT", type=typed(values.log_format),
        help="json | console | auto: console on a TTY, else JSON (INITD_LOG_FORMAT)")
    add("--version", action="version", version=f"initd {__version__}")
    add("command", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return p


def typed(parse: Callable[[str], object]) -> Callable[[str], object]:
    """argparse reports a ValueError as "invalid <name> value"; keep our explanation."""
    def convert(text: str) -> object:
        try:
            return parse(text)
        except ValueError as err:
            raise argparse.ArgumentTypeError(f"{text!r}: {err}") from None
    return convert


def _agent_options(add: Callable[..., object]) -> None:
    """Who runs CMD and how: signals, restarts, environment, readiness."""
    add("--workspace", metavar="DIR", type=typed(values.path),
        help="workspace directory (INITD_WORKSPACE, WORKSPACE_PATH; default: cwd)")
    add("--user", metavar="NAME", help="run CMD as this user, privileges fully dropped "
        "(INITD_USER, AGENT_USER; default: the invoking user)")
    add("--grace", metavar="SECONDS", type=typed(values.seconds),
        help="time between the stop signal and SIGKILL (INITD_GRACE; default 8)")
    add("--stop-signal", metavar="SIG", type=typed(values.stop_signal),
        help="the signal that stops CMD: passed on, then --grace, then SIGKILL; every "
             "other signal is only passed on (INITD_STOP_SIGNAL; default TERM)")
    add("--remap-exit", metavar="FROM:TO", action="append", type=typed(values.remap),
        help="report exit code FROM as TO, like tini -e; repeatable (INITD_REMAP_EXIT)")
    add("--restart", metavar="POLICY", type=typed(values.restart),
        help="never | on-failure | always (INITD_RESTART; default never)")
    add("--max-restarts", metavar="N", type=typed(values.count),
        help="give up after N restarts within --restart-window (INITD_MAX_RESTARTS; "
             "default 5)")
    add("--restart-window", metavar="SECONDS", type=typed(values.seconds),
        help="window for --max-restarts (INITD_RESTART_WINDOW; default 60)")
    add("--env-file", metavar="PATH", action="append", type=typed(values.path),
        help="load variables from a .env file, never overriding the real environment; "
             "repeatable (INITD_ENV_FILE, ':'-separated)")
    add("--config", metavar="PATH", help="config file (INITD_CONFIG; default "
        f"{paths.DEFAULT_CONFIG})")
    add("--ready-port", metavar="PORT", type=typed(values.port), help="the agent is "
        "ready once this port on loopback accepts a connection (INITD_READY_PORT)")
    add("--ready-url", metavar="URL", type=typed(values.url), help="... or once this URL "
        "answers 200-399 (INITD_READY_URL); with neither, ready when started")
    add("--health-port", metavar="PORT", type=typed(values.port), help="serve /healthz "
        "and /readyz over HTTP on this TCP port, for Kubernetes httpGet probes "
        "(INITD_HEALTH_PORT)")


def _hook_options(add: Callable[..., object]) -> None:
    """The hooks: where they are, their state, the hook service, trust, the chain."""
    add("--session-id", metavar="ID", type=typed(values.session_ident), help="session "
        "id: status lives in ~/.discobot/ID/hooks (INITD_SESSION_ID, SESSION_ID; default: "
        "generated)")
    add("--hooks-dir", metavar="DIR", type=typed(values.path), help="the image's hook "
        f"directory, run before the workspace's (INITD_HOOKS_DIR; default "
        f"{paths.DEFAULT_HOOKS_DIR})")
    add("--secret", metavar="NAME", action="append", help="an environment variable no "
        "hook may see; repeatable (INITD_SECRETS; default DISCOBOT_SECRET)")
    add("--state-dir", metavar="DIR", type=typed(values.path), help="where hook status, "
        "hook logs and session records are kept, e.g. a volume under a --read-only root "
        "(INITD_STATE_DIR; default: the agent user's ~/.discobot)")
    add("--socket", metavar="PATH", type=typed(values.path), help="where the hook "
        "service's control API listens; the agent gets it as INITD_SOCKET (INITD_SOCKET; "
        f"{settings.SOCKET_HELP})")
    add("--service", dest="service", action="store_const", const=True, help="always run "
        "the hook service (INITD_SERVICE=1; default: when there is a workspace)")
    add("--no-service", dest="service", action="store_const", const=False,
        help="never run the hook service (INITD_SERVICE=0)")
    add("--max-reprompts", metavar="N", type=typed(values.count), help="hook-triggered "
        "re-prompts per user message (INITD_MAX_REPROMPTS; default 3)")
    add("--trust", dest="trust", action="store_const", const=True, help="run a workspace "
        "hook only once its content is approved by initd hooks trust (INITD_TRUST=1)")
    add("--trust-file", metavar="PATH", type=typed(values.path), help="the approvals "
        f"(INITD_TRUST_FILE; default {paths.DEFAULT_TRUST_FILE})")
    add("--no-precommit", dest="precommit", action="store_const", const=False,
        help="do not install the managed git pre-commit chain (INITD_PRECOMMIT=0)")
    add("--no-devcontainer", dest="devcontainer", action="store_const", const=False,
        help="do not run the workspace's devcontainer.json lifecycle commands "
        "(INITD_DEVCONTAINER=0)")


def parse(argv: Sequence[str]) -> argparse.Namespace:
    args = parser().parse_args(argv)
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise UsageError(f"no command to run; usage: {USAGE.splitlines()[0]} (or "
                         "initd VERB …: see initd --help)")
    args.command = command
    if args.remap_exit is not None:
        args.remap_exit = tuple(args.remap_exit)
    if args.env_file is not None:
        args.env_file = tuple(args.env_file)
    if args.secret is not None:
        args.secret = tuple(args.secret)
    return args


# The options verbs share, defined once.

def socket_option(p: argparse.ArgumentParser, text: str = "(INITD_SOCKET)") -> None:
    p.add_argument("--socket", metavar="PATH", default=None, help=text)


def workspace_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workspace", metavar="DIR", help="(INITD_WORKSPACE; default: cwd)")


def timeout_option(p: argparse.ArgumentParser, default: float) -> None:
    """A probe's --timeout: a probe that hangs is a failed probe."""
    def positive(text: str) -> float:
        seconds = values.seconds(text)
        if not seconds > 0:
            raise ValueError("expected a number of seconds > 0")
        return seconds

    p.add_argument("--timeout", metavar="SECONDS", default=default, type=positive,
                   help=f"give up after this long (default {default:g}; keep it "
                        "under the probe's timeoutSeconds)")


def table(rows: Sequence[Sequence[str]]) -> None:
    """Rows as columns for people: each column as wide as its widest cell, two spaces
    apart, the last one as it is (a path, a command)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join([*(cell.ljust(width) for cell, width in zip(row, widths,
                                                                    strict=False)),
                         row[-1]]).rstrip())
