"""Actions that are processes: ``shell`` (``sh -c`` and the command's placeholders as
variable references, templates.py), ``command`` (Claude Code's: ``sh -c`` as written, with
``CLAUDE_PROJECT_DIR`` and what the agent's wire passed on), ``script`` (a discobot hook
file, run directly), and the built-in ``git-commit`` and ``git-push`` (argv, never a
shell). Each runs in its own process group as the agent user, with the event as JSON on
stdin, and a timeout that stops the whole group (hooks/runner.capture)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from initd.events import answers, execsize, templates
from initd.events.actions import ActionResult, Call, Status
from initd.events.model import AgentCommand, Command, Exec, GitCommit, GitPush, Script, Shell
from initd.http import jsonstream
from initd.process import runner
from initd.process.git import scrubbed


def shell(call: Call, spec: Shell) -> ActionResult:
    try:
        rendered, refs, unknown = templates.shell(spec.command, call.lookup)
    except templates.TemplateError as err:  # (loaders refuse these: a hook made in code)
        return ActionResult(Status.ERROR, error=str(err))
    return run_process(call, ["sh", "-c", rendered], refs, tuple(unknown))


def command(call: Call, spec: Command | Exec | AgentCommand) -> ActionResult:
    """Claude Code's command hook: the shell runs it as written (``$CLAUDE_PROJECT_DIR`` is
    the workspace), or, in exec form, its ``args`` are the argument vector (no shell); in
    the workspace, with Claude Code's event JSON on stdin, in a session of its own without
    a controlling terminal (the reference: "command hooks run in their own session").
    Another agent's (AgentCommand) alike, with its own variables."""
    if isinstance(spec, AgentCommand):
        given = {name: call.stdin[field] for name, field in spec.inputs.items()
                 if isinstance(call.stdin.get(field), str) and "\0" not in call.stdin[field]}
        return run_process(call, [spec.shell, "-c", spec.command], {**given, **spec.env},
                           new_session=True)
    argv = [spec.command, *spec.args] if isinstance(spec, Exec) else \
        [spec.shell, "-c", spec.command]
    # the agent's own hook environment its wire passed on (Claude Code's CLAUDE_ENV_FILE),
    # for the hooks of that agent's format alone; they run as the agent, as ever
    passed = call.origin.env if call.origin and call.origin.agent == call.hook.dialect else ()
    return run_process(call, argv, {**dict(passed), "CLAUDE_PROJECT_DIR": call.workspace},
                       new_session=True)


def script(call: Call, spec: Script) -> ActionResult:
    """A discobot script, run directly; one the agent changed since the session's guard
    snapshot (its front matter, its body, or gone) is that guard's error, and blocks a
    blockable event: the guard of the session's start cannot run (invariant 15)."""
    if call.guards is not None and call.guards.covers(spec.path):
        from initd.events import guardset

        changed = guardset.changed(spec.path, call.guards)
        if changed is not None:
            return ActionResult(Status.ERROR, fails_closed=True, error=(
                f"{spec.path} {changed} since the session started: the guard of its start "
                "cannot run (a change to a hook takes effect at initd's next start)"))
    return run_process(call, [spec.path])


def git_commit(call: Call, spec: GitCommit) -> ActionResult:
    """Stage everything and commit it, with the templated message (AutoAgent's
    git-commit). Nothing to commit is a success that says so."""
    message, unknown = templates.inline(spec.message, call.lookup)
    staged = run_process(call, ["git", "add", "-A"], git=True)
    if staged.status != Status.OK:
        return staged
    clean = run_process(call, ["git", "diff", "--cached", "--quiet"], git=True)
    if clean.exit_code == 0:
        return staged._replace(stdout="nothing to commit\n", unknown=tuple(unknown))
    verify = ["--no-verify"] if spec.noVerify else []
    return run_process(call, ["git", "commit", "-m", message, *verify], git=True,
                unknown=tuple(unknown))


def git_push(call: Call, spec: GitPush) -> ActionResult:
    """``git push REMOTE BRANCH``; ``current`` is the branch checked out now."""
    branch = spec.branch
    if branch == "current":
        found = run_process(call, ["git", "symbolic-ref", "--short", "HEAD"], git=True)
        if found.status != Status.OK:
            return found._replace(error="no branch is checked out (a detached HEAD): "
                                  "cannot push branch 'current'")
        branch = found.stdout.strip()
    return run_process(call, ["git", "push", spec.remote, branch], git=True)


def run_process(call: Call, argv: Sequence[str], refs: dict[str, str] | None = None,
         unknown: tuple[str, ...] = (), git: bool = False, new_session: bool = False
         ) -> ActionResult:
    env = {**call.env, **(refs or {})}
    if git:  # the workspace's repository, whatever git may have called the agent
        env = scrubbed(env)
    too_big = execsize.too_big(argv, env)
    if too_big is not None:  # exec would fail (E2BIG): the hook's error, never a skip
        return ActionResult(Status.ERROR, error=f"could not start: {too_big}",
                            unknown=unknown, fails_closed=True)
    stdin = jsonstream.encoded(call.stdin)  # (a piece at a time: a Write's file in it)
    started = time.monotonic()
    got = runner.capture(argv, env=env, cwd=call.workspace, account=call.account,
                         timeout=call.hook.timeout, stdin=stdin, grace=call.grace,
                         cancel=call.cancel, limits=call.limits,
                         stdout_head=answers.ANSWER_LIMIT, new_session=new_session)
    duration = round((time.monotonic() - started) * 1000, 1)
    err = got.stderr.text()  # at most 64 KiB: head and tail
    shown = answers.kept(bytes(got.stdout.head), bytes(got.stdout.tail), not got.stdout.elided)
    out = shown.pop("stdout")  # (the same 64 KiB at most; an answer is read whole)
    if got.exec_error is not None:
        return ActionResult(Status.ERROR, None, out, err, False, duration,
                            f"could not start: {got.exec_error}", unknown=unknown,
                            fails_closed=execsize.refused(got.exec_error))
    if got.timed_out:
        return ActionResult(Status.ERROR, None, out, err, True, duration,
                            f"timed out after {call.hook.timeout:g}s; its process group "
                            "was stopped", unknown=unknown)
    if got.cancelled:
        return ActionResult(Status.ERROR, got.exit_code, out, err, False, duration,
                            "cancelled: initd is stopping", unknown=unknown)
    status = Status.OK if got.exit_code == 0 else Status.FAILED
    return ActionResult(status, got.exit_code, out, err, False, duration, unknown=unknown,
                        error=None if got.limit is None else f"killed by {got.limit}",
                        **shown)

