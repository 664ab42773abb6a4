"""``initd hooks list | check | run NAME | trust``: the hooks as initd sees them, without
booting.

``list`` shows every hook of every dialect (discobot scripts; iteratr, nyzhi, AutoAgent
and agent-pipelines config), its fields and source, and every file that is not a hook
with the reason; ``check`` validates for CI (exit 1 with every error listed, and every
file of a hooks directory that will not run is one, as the agent would run it); ``run``
runs one script hook now, as its ``run_as`` says, and exits with its code; ``trust``
approves the workspace's hooks as they are now (for ``--trust``).
"""

from __future__ import annotations

import os
from argparse import Namespace
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

from initd.commands.options import Parser, socket_option, workspace_option
from initd.config import log, paths, settings
from initd.config.problems import ERROR
from initd.errors import InitdError, UsageError, one_line, shown
from initd.hooks import discovery, model
from initd.process import users

if TYPE_CHECKING:
    from initd.devcontainer.config import Config
    from initd.events.loading import Collected


def parser() -> Parser:
    p = Parser(prog="initd hooks", description="Inspect, validate and run workspace hooks.")
    common = Parser(add_help=False)
    workspace_option(common)
    common.add_argument("--hooks-dir", metavar="DIR", help="the image's hook directory "
                        f"(INITD_HOOKS_DIR; default {paths.DEFAULT_HOOKS_DIR})")
    common.add_argument("--config", metavar="PATH", help="config file (INITD_CONFIG)")
    common.add_argument("--user", metavar="NAME", help="the agent user: whose config files "
                        "(~/.config/nyzhi, ~/.autoagent, …) count, and who run_as: user "
                        "hooks run as (INITD_USER, AGENT_USER)")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="list|check|run|trust",
                             parser_class=Parser)
    listing = verbs.add_parser("list", parents=[common], help="every hook and why other "
                               "files are not hooks")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    verbs.add_parser("check", parents=[common], help="validate every hook file; exit 1 "
                     "with every error listed")
    run = verbs.add_parser("run", parents=[common], help="run one hook now")
    run.add_argument("name", help="the hook's id or name")
    run.add_argument("--session-id", metavar="ID", help="(INITD_SESSION_ID, SESSION_ID)")
    run.add_argument("-v", "--verbose", action="count")
    trust = verbs.add_parser("trust", parents=[common], help="approve the workspace's "
                             "hooks, as they are now (for --trust / INITD_TRUST=1)")
    trust.add_argument("--trust-file", metavar="PATH", help="(INITD_TRUST_FILE; default "
                       f"{paths.DEFAULT_TRUST_FILE})")
    return p


def main(argv: Sequence[str]) -> int:
    if argv[:1] in (["output"], ["rerun"]):  # through the running hook service

        return served(argv[0], argv[1:])
    args = parser().parse_args(argv)
    config = settings.load(args, os.environ)
    if not os.path.isdir(config.workspace):  # a typo must not pass a CI check as "0 hooks"
        raise InitdError(f"workspace {one_line(config.workspace)}: no such directory "
                         "(--workspace, INITD_WORKSPACE)")
    agent = users.agent(config.user) or users.current()
    with guard(args.verb, config.workspace, agent), runner(agent):
        return verb(args, config, agent)


def runner(agent: users.Account) -> AbstractContextManager[None]:
    """The agent's hooks are judged as the agent runs them (can it read and execute each
    one?), not as whoever runs the verb: root reads what the agent cannot."""
    if agent.uid == os.geteuid():
        return nullcontext()
    return discovery.running_as(agent.uid, (agent.gid, *agent.groups))


def guard(verb: str, workspace: str, agent: users.Account) -> AbstractContextManager[None]:
    """Root reads the agent's files for a person, and prints and approves what it read:
    through the door (hooks/workspacefiles.py: no link followed, the owner's regular files
    only, capped, never blocking). ``trust`` always: a person approves files, never what a
    link names now."""
    from initd.hooks import workspacefiles

    if verb != "trust" and os.geteuid() != 0:
        return nullcontext()  # the caller's own rights: the caller's business
    try:
        trees = [workspacefiles.tree(workspace)]
    except OSError as err:
        raise InitdError(f"workspace {one_line(workspace)}: cannot open it: "
                         f"{err.strerror}") from None
    if agent.uid != os.geteuid():  # its ~/.claude, ~/.config/nyzhi…: the agent's too
        trees.append(workspacefiles.Tree(agent.home, (agent.uid, agent.gid)))
    return workspacefiles.guard(*trees)


def verb(args: Namespace, config: settings.Settings, agent: users.Account) -> int:
    found = discovery.for_workspace(config.workspace, config.hooks_dir)
    if args.verb == "run":
        return run_hook(found, args.name, config)
    from initd.events import dialects  # the other hook systems' config files

    events = dialects.load_all(config.workspace, config.hooks_dir, agent.home)
    dev = devcontainer_of(config.workspace)
    if args.verb == "list":
        from initd.commands import listing

        return listing.list_hooks(found, events, as_json=args.json,
                                  dev=dev and (dev, agent, config.devcontainer))
    if args.verb == "check":
        return check(found, events, dev)
    return trust(found, events, config, dev)


def devcontainer_of(workspace: str) -> Config | None:
    """The workspace's devcontainer.json, checked (its parser only when there is one)."""
    from initd.devcontainer import config as devcontainer

    return devcontainer.load(workspace) if devcontainer.find(workspace) else None


def check(found: discovery.Found, events: Collected, dev: Config | None = None) -> int:
    """Every problem, and exit 1 on an error. Each file of a hooks directory that is not a
    hook is one, whatever ``list`` calls it (a note: a README, a directory, a link that
    names no hook file): it will not run, and a guard written that way never would."""
    for hook in found.hooks:
        for warning in hook.warnings:
            print(f"warning: {one_line(hook.path)}: {one_line(warning)}")
    skipped = [p if p.severity == ERROR else p._replace(severity=ERROR, reason=p.reason
               + " (it will not run: a hooks directory holds hooks only)")
               for p in found.problems]
    errors = [p for p in events.problems if p.severity == ERROR]
    for problem in (*skipped, *events.problems, *(dev.problems if dev else ())):
        print(problem.line())
    dev_errors = len(dev.errors) if dev else 0
    commands = sum(len(s.commands) for s in dev.stages) if dev and not dev_errors else 0
    valid = len(found.hooks) + len(events.hooks) - sum(h.is_event for h in found.hooks)
    print(f"{valid + commands} hook(s) valid, "
          f"{len(skipped) + len(errors) + dev_errors} error(s)")
    return 1 if skipped or errors or dev_errors else 0


def trust(found: discovery.Found, events: Collected, config: settings.Settings,
          dev: Config | None = None) -> int:
    """Record the content hash of every hook the workspace defines, as it is now; a file
    the door refused is named, and its hooks are not approved."""
    from initd.devcontainer import config as devcontainer
    from initd.events.trust import workspace_entries
    from initd.hooks import truststore, workspacefiles
    from initd.hooks.trust import Trust

    store = Trust(config.trust_file, enforce=True, image_dir=config.hooks_dir)
    entries = workspace_entries(found.hooks, events.hooks, config.hooks_dir)
    if dev is not None and dev.errors:
        print(f"not trusted: {one_line(dev.path)} has errors (initd hooks check)")
    elif dev is not None:
        entries += devcontainer.trust_entries(dev)
    for refused in workspacefiles.refusals():
        print(f"refused    {one_line(refused)}: its hooks are not approved")
    try:
        approved = store.approve(entries)
    except truststore.Refused as err:
        raise InitdError(one_line(str(err))) from None
    except OSError as err:
        raise InitdError(f"cannot write {config.trust_file}: {err.strerror} (approving hooks "
                         "is for root, or whoever owns that file: not the agent)") from None
    for note in store.notes:
        print(f"note: {one_line(note)}")
    for entry, state in approved:  # the person sees what is approved; the store keeps hashes
        print(f"{state:9}  {one_line(entry.label)}")
    print(f"{len(approved)} hook(s) trusted in {config.trust_file}")
    return 0


def run_hook(found: discovery.Found, name: str, config: settings.Settings) -> int:
    matches = [hook for hook in found.hooks if name in (hook.id, hook.name)]
    if not matches:
        broken = [p for p in found.errors
                  if model.hook_id(os.path.basename(p.path)) == name]
        if broken:  # say why it is not a hook, not that there is none
            raise UsageError(f"hook {shown(name)} is broken: {broken[0]}")
        known = ", ".join(hook.id for hook in found.hooks) or "none"
        raise UsageError(f"no hook {shown(name)} (known: {known}; see initd hooks list)")
    from initd.hooks import context, launch  # status store, threads: only for running one

    log.configure(config.verbose, config.log_format)
    agent = users.agent(config.user)
    ctx = context.make(config, agent, log.get(logger="hooks"))
    if ctx.trust is not None and os.geteuid() != 0:  # the store is root's: ask (client.py)
        from initd.commands import client

        ctx = ctx._replace(trust=ctx.trust.asking(client.trust_verdict))
    copies = None
    if os.geteuid() == 0 and matches[0].run_as == "root":
        if ctx.trust is None and matches[0].directory != config.hooks_dir \
                and agent is not None and agent.uid != 0:
            # (invariant 11: the workspace's code runs as root only before the agent runs;
            # what is there now may be the agent's, unless a person approved its bytes)
            raise UsageError(f"hook {shown(name)} is the workspace's and run_as: root: with "
                             f"an agent user ({shown(agent.name)}), root runs it only at "
                             "boot, or when trust checks its bytes (initd hooks trust, then "
                             "INITD_TRUST=1 initd hooks run …)")
        # Root runs a copy it took now, and --trust judges exactly those bytes: the agent
        # may swap the workspace's file between a hash and an exec by name.
        from initd.supervisor.roothooks import RootHooks

        copies = RootHooks(matches[:1])
        ctx = ctx._replace(snapshots=copies)
    try:
        result = launch.run_one(matches[0], ctx, echo=lambda line: print(line, flush=True))
    except OSError as err:
        raise InitdError(f"cannot run hook {name!r}: {err}") from None
    finally:
        if copies is not None:
            copies.close()
    return result.exit_code  # a failure was logged with its exit code and log path


def served(verb: str, argv: Sequence[str]) -> int:
    """``initd hooks output|rerun ID``: asked of the running hook service."""
    import sys
    import urllib.parse

    from initd.commands import client

    p = Parser(prog=f"initd hooks {verb}")
    p.add_argument("id")
    if verb == "output":
        p.add_argument("--raw", action="store_true", help="as root too, the log as the hook "
                       "wrote it, terminal escapes and all")
    socket_option(p)
    args = p.parse_args(argv)
    hook = urllib.parse.quote(args.id, safe="")  # (a name, never a second path or header)
    if verb == "output":
        code, answer = client.call("GET", f"/v1/hooks/{hook}/output", sock=args.socket)
        if code == 200 and isinstance(answer, dict) and isinstance(answer.get("output"), str):
            text = answer["output"]
            # What the agent's hooks printed, read by root (an operator at a terminal):
            # escapes that set the clipboard, the title or clear the screen are shown
            # as text, never sent to the terminal. Lines and tabs stay.
            sys.stdout.write(text if args.raw or os.geteuid() != 0 else "\n".join(
                one_line(line.replace("\t", " " * 4)) for line in text.split("\n")))
            return 0
        return client.show(code, answer)
    return client.show(*client.call("POST", f"/v1/hooks/{hook}/rerun", sock=args.socket))
