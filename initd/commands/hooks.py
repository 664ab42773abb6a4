"""``initd hooks list | check | run NAME``: the hooks as initd sees them, without booting.

``list`` is the ``/hooks`` view (every hook, its fields and source, and every file that
is not a hook with the reason); ``check`` validates for CI (exit 1 with every error
listed); ``run`` runs one hook now, as its ``run_as`` says, and exits with its code.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

from initd import log, settings, users
from initd.errors import InitdError, UsageError
from initd.hooks import discovery
from initd.options import Parser


def parser() -> Parser:
    p = Parser(prog="initd hooks", description="Inspect, validate and run workspace hooks.")
    common = Parser(add_help=False)
    common.add_argument("--workspace", metavar="DIR", help="(INITD_WORKSPACE; default: cwd)")
    common.add_argument("--hooks-dir", metavar="DIR", help="the image's hook directory "
                        f"(INITD_HOOKS_DIR; default {settings.DEFAULT_HOOKS_DIR})")
    common.add_argument("--config", metavar="PATH", help="config file (INITD_CONFIG)")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="list|check|run",
                             parser_class=Parser)
    listing = verbs.add_parser("list", parents=[common], help="every hook and why other "
                               "files are not hooks")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    verbs.add_parser("check", parents=[common], help="validate every hook file; exit 1 "
                     "with every error listed")
    run = verbs.add_parser("run", parents=[common], help="run one hook now")
    run.add_argument("name", help="the hook's id or name")
    run.add_argument("--user", metavar="NAME", help="the agent user for run_as: user hooks "
                     "(INITD_USER, AGENT_USER)")
    run.add_argument("--session-id", metavar="ID", help="(INITD_SESSION_ID, SESSION_ID)")
    run.add_argument("-v", "--verbose", action="count")
    return p


def main(argv: Sequence[str]) -> int:
    if argv[:1] in (["output"], ["rerun"]):  # through the running hook service
        from initd.commands import api

        return api.hook(argv[0], argv[1:])
    args = parser().parse_args(argv)
    args.command = ["hooks", args.verb]
    config = settings.load(args, os.environ)
    found = discovery.for_workspace(config.workspace, config.hooks_dir)
    if args.verb == "list":
        return list_hooks(found, as_json=args.json)
    if args.verb == "check":
        return check(found)
    return run_hook(found, args.name, config)


def list_hooks(found: discovery.Found, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"hooks": [hook._asdict() for hook in found.hooks],
                          "skipped": [p._asdict() for p in found.problems]}, indent=2))
        return 0
    rows = [("ID", "TYPE", "RUN AS", "DETAILS", "NAME", "FILE")]
    for hook in found.hooks:
        details = [f"timeout={hook.timeout:g}s"]
        if hook.type == "file":
            details += [f"pattern={hook.pattern}", f"notify_llm={str(hook.notify_llm).lower()}"]
        if hook.type == "session" and not hook.blocking:
            details.append("blocking=false")
        rows.append((hook.id, hook.type, hook.run_as, " ".join(details), hook.name, hook.path))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
              + "  " + row[5])
    for hook in found.hooks:
        for warning in hook.warnings:
            print(f"warning: {hook.path}: {warning}")
    for problem in found.problems:
        print(f"{problem.severity}: {problem}")
    return 0


def check(found: discovery.Found) -> int:
    for hook in found.hooks:
        for warning in hook.warnings:
            print(f"warning: {hook.path}: {warning}")
    for problem in found.errors:
        print(f"error: {problem}")
    print(f"{len(found.hooks)} hook(s) valid, {len(found.errors)} error(s)")
    return 1 if found.errors else 0


def run_hook(found: discovery.Found, name: str, config: settings.Settings) -> int:
    matches = [hook for hook in found.hooks if name in (hook.id, hook.name)]
    if not matches:
        known = ", ".join(hook.id for hook in found.hooks) or "none"
        raise UsageError(f"no hook {name!r} (known: {known}; see initd hooks list)")
    from initd.hooks import session  # status store, threads: only for running one

    log.configure(config.verbose, config.log_format)
    agent = users.lookup(config.user) if config.user else None
    if agent is not None:
        users.require_can_become(agent)
    ctx = session.context(config, agent, log.get(logger="hooks"))
    try:
        result = session.run_one(matches[0], ctx, echo=lambda line: print(line, flush=True))
    except OSError as err:
        raise InitdError(f"cannot run hook {name!r}: {err}") from None
    return result.exit_code  # a failure was logged with its exit code and log path
