"""``initd precommit install | uninstall | run ID``: the managed git pre-commit chain.

``install`` and ``uninstall`` are for people (boot installs by itself); ``run`` is what
the installed script calls for each hook, so that status.json and the output log are
written by initd's own code, with its locked, atomic writes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

from initd.commands.options import Parser, workspace_option
from initd.config import log, paths, settings
from initd.errors import InitdError, UsageError
from initd.hooks import discovery, precommit
from initd.process import users


def parser() -> Parser:
    p = Parser(prog="initd precommit", description="The managed git pre-commit chain.")
    common = Parser(add_help=False)
    workspace_option(common)
    common.add_argument("--hooks-dir", metavar="DIR", help="(INITD_HOOKS_DIR)")
    common.add_argument("--session-id", metavar="ID", help="(INITD_SESSION_ID, SESSION_ID)")
    common.add_argument("--config", metavar="PATH", help="config file (INITD_CONFIG)")
    common.add_argument("--secret", metavar="NAME", action="append", help="a variable no "
                        "hook may see; repeatable (INITD_SECRETS; DISCOBOT_SECRET always)")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="install|uninstall|run",
                             parser_class=Parser)
    install = verbs.add_parser("install", parents=[common], help="install or refresh it")
    uninstall = verbs.add_parser("uninstall", parents=[common], help="remove it; restore "
                                 "the repository's own hook and core.hooksPath")
    for verb in (install, uninstall):
        verb.add_argument("--user", metavar="NAME", help="the agent user who will commit "
                          "(INITD_USER, AGENT_USER): git reads the repository as that user"
                          + ("; trusted for this repository" if verb is install else ""))
    run = verbs.add_parser("run", parents=[common], help="run pre-commit hooks (the "
                           "installed script calls this)")
    run.add_argument("ids", nargs="+", metavar="ID")
    return p


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    config = settings.load(args, os.environ)
    if args.verb == "run":
        return run(config, args.ids)
    # With --user, git reads the repository as the agent (its config runs nothing as
    # root) and the agent's own ~/.gitconfig is written by git run as the agent.
    agent = users.agent(config.user)
    repo = precommit.Repo.find(config.workspace, agent)
    if repo is None:
        raise InitdError(f"{config.workspace} is not the top of a git repository (use "
                         "--workspace)")
    if args.verb == "uninstall":
        print(precommit.uninstall(repo))
        return 0
    from initd.hooks import context

    hooks = discovery.for_workspace(config.workspace, config.hooks_dir).hooks
    sid = context.session_id(config.session_id, log.get())
    print(precommit.install(repo, hooks, session_id=sid, secrets=config.secret))
    if agent is not None:
        try:
            added = precommit.trust_for(repo, agent)
        except (OSError, subprocess.SubprocessError) as err:
            raise InitdError(f"cannot add {repo.top} to safe.directory in "
                             f"{agent.home}/.gitconfig as {agent.name}: {err}") from None
        if added:
            print(f"added {repo.top} to safe.directory in {agent.home}/.gitconfig")
    return 0


def run(config: settings.Settings, ids: Sequence[str]) -> int:
    """Each hook in turn, as the committing user; the first failure ends it, its output
    on stderr for whoever ran ``git commit``."""
    from initd.hooks import context, launch

    log.configure(-1, config.log_format)  # git's output is for the person: ours is below
    found = discovery.for_workspace(config.workspace, config.hooks_dir)
    by_id = {hook.id: hook for hook in found.hooks if hook.type == "pre-commit"}
    missing = [hook_id for hook_id in ids if hook_id not in by_id]
    if missing:
        raise UsageError(f"no pre-commit hook {', '.join(map(repr, missing))} in "
                         f"{paths.workspace_hooks(config.workspace)} (hooks changed since "
                         "the chain was installed? run: initd precommit install)")
    ctx = context.make(config, None, log.get(logger="precommit"))
    if ctx.trust is not None and os.geteuid() != 0:  # the store is root's: ask (client.py)
        from initd.commands import client

        ctx = ctx._replace(trust=ctx.trust.asking(client.trust_verdict))
    for hook_id in ids:
        hook = by_id[hook_id]
        result = launch.run_one(hook, ctx, echo=lambda line: None)
        if not result.ok:
            sys.stderr.write(result.output())
            reason = "timed out" if result.timed_out else f"failed with exit code " \
                f"{result.exit_code}"
            sys.stderr.write(f"\npre-commit hook {hook.name!r} {reason} (full output: "
                             f"{result.output_path})\n")
            return result.exit_code or 1
    return 0

