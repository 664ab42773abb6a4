"""Running one hook now, of any type: root's copy for a root hook, trust checked, its
output logged, its result recorded in status.json (now, or by the session phase's
``Recorder`` while the next hook runs)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, BinaryIO, NamedTuple

from initd.config.log import Logger
from initd.errors import shown
from initd.hooks.context import HookContext, account_for, environment
from initd.hooks.model import Hook
from initd.process import runner, spawn
from initd.process.limits import Limits
from initd.process.users import Account

if TYPE_CHECKING:
    from initd.process.runner import Keeper

TAIL_LINES = 20  # of a failed hook's output, in the warning that reports it


ROOT_TYPES = ("session",)  # the one kind root runs (a root pre-commit hook runs as whoever
# commits; model.validate refuses a root file hook or a root background session hook)


def run_one(hook: Hook, ctx: HookContext, *, stdin: bytes | None = None,
            cancel: threading.Event | None = None,
            echo: Callable[[str], None] | None = None,
            extra_env: dict[str, str] | None = None,
            recorder: Callable[[Hook, runner.Result], None] | None = None
            ) -> runner.Result:
    """Run ``hook`` now, record it in status.json (now, or by ``recorder`` while the
    next hook runs), log its output and outcome.

    A ``run_as: root`` session hook of an agent that is not root runs from root's copy,
    taken at boot before any hook ran, and ``--trust`` judges exactly those bytes: a
    process a user session hook left may rewrite the workspace's file at any moment
    (invariant 8). Root hooks run only at boot, before the agent (invariant 11)."""
    original = hook.path
    content = None
    if hook.run_as == "root" and hook.type in ROOT_TYPES:
        if ctx.snapshots is not None:
            copy = ctx.snapshots.copy_of(hook)
            if isinstance(copy, str):
                return refuse(hook, ctx, copy)
            hook, original, content = copy.hook, copy.original, copy.content
        elif os.geteuid() != 0:
            return refuse(hook, ctx, f"run_as: root hook {shown(hook.id)}: this process is "
                                     "not root (root hooks run only at boot, as root)")
    if ctx.trust is not None:
        refusal = ctx.trust.refusal(hook._replace(path=original), content)
        if refusal is not None:
            return refuse(hook, ctx, refusal)
    return execute(hook, ctx, Launch(
        (hook.path,), environment(hook, ctx, {"DISCOBOT_HOOK_FILE": original,
                                              **(extra_env or {})}),
        ctx.workspace, account_for(hook, ctx), hook.timeout, hook.limits.over(ctx.limits),
        hook.name), stdin=stdin, cancel=cancel, echo=echo, recorder=recorder)


class Launch(NamedTuple):
    """How one hook's process starts: what a hook file and a devcontainer.json command
    differ in. ``label`` names its output lines, ``noun`` its outcome's line."""

    argv: Sequence[str]
    env: dict[str, str]
    cwd: str
    account: Account | None
    timeout: float
    limits: Limits
    label: str
    noun: str = "hook"
    keeper: Keeper | None = None  # a session of its own, and what it leaves is kept


def execute(hook: Hook, ctx: HookContext, launch: Launch, *, stdin: bytes | None = None,
            cancel: threading.Event | None = None,
            echo: Callable[[str], None] | None = None,
            recorder: Callable[[Hook, runner.Result], None] | None = None
            ) -> runner.Result:
    """The one way a hook that may run runs: its log made, ``running`` recorded once it
    runs a while, its result recorded (now, or by ``recorder``) and its outcome said."""
    log = ctx.log.bind(hook=hook.id)
    out, log_path = new_log(hook, ctx)
    result = runner.run(
        launch.argv[0], argv=launch.argv, env=launch.env, cwd=launch.cwd,
        account=launch.account, timeout=launch.timeout, log=out, log_path=log_path,
        stdin=stdin, grace=ctx.grace, limits=launch.limits,
        on_line=echo or (lambda line: log.info(f"[{launch.label}] {line}")),
        cancel=cancel, on_running=lambda child: record_start(ctx, hook, child, log),
        keeper=launch.keeper)
    if result.log_error is not None and ctx.state_problem is None:
        log.warning("hook's log not written", log=result.output_path, error=result.log_error)
    if recorder is not None:
        recorder(hook, result)
    else:
        record(ctx, hook, result, log)
    if result.ok:
        log.info(f"{launch.noun} succeeded", duration_ms=round(result.duration * 1000, 1))
    elif result.cancelled:
        log.info(f"{launch.noun} stopped: initd is shutting down", log=result.output_path)
    else:
        log.warning(f"{launch.noun} failed", name=hook.name, exit_code=result.exit_code,
                    timed_out=result.timed_out, signal=result.signal, limit=result.limit,
                    log=result.output_path, error=result.exec_error,
                    output_tail=_tail(result))
    return result


def new_log(hook: Hook, ctx: HookContext) -> tuple[BinaryIO | OSError, str]:
    """The hook's new log file, or why there is none: the hook runs all the same."""
    try:
        return ctx.store.new_log(hook.id)
    except OSError as err:
        return err, ctx.store.output_path(hook.id)


def record(ctx: HookContext, hook: Hook, result: runner.Result, log: Logger) -> None:
    """The result in status.json. A full disk, a read-only state directory (said once,
    at boot: ctx.state_problem), the agent's state made a link: the result stands."""
    said = ctx.state_problem
    try:
        ctx.store.finished(hook, result)
    except OSError as err:
        if said is None:  # (once: a full disk keeps the result, and says so, until written)
            log.warning("hook status not recorded" if ctx.state_problem is None else
                        "hook status kept in memory: written when the disk allows",
                        status=ctx.store.path, error=str(err))


def record_start(ctx: HookContext, hook: Hook, child: spawn.Child, log: Logger) -> None:
    """``running`` in status.json; a state the agent broke (a link swapped in, its lock
    held) costs that record and a line, never the supervision of a running hook."""
    try:
        ctx.store.started(hook, child.pgid)
    except OSError as err:
        if ctx.state_problem is None:
            log.warning("hook status not recorded", status=ctx.store.path, error=str(err))


def refuse(hook: Hook, ctx: HookContext, reason: str, fixable: bool = False
           ) -> runner.Result:
    """A hook initd will not run: a failed result, recorded and logged like any other
    (never a silent skip). ``fixable``: a failure the model is told (a file hook the
    agent changed since the session started), not a refusal a person must act on."""
    ctx.log.warning("hook not run", hook=hook.id, reason=reason)
    out, log_path = new_log(hook, ctx)
    result = runner.refused(out, log_path, reason)._replace(refused=not fixable)
    record(ctx, hook, result, ctx.log)
    return result


def _tail(result: runner.Result) -> str:
    text = (result.tail or result.head).decode(errors="replace")
    return "\n".join(text.rstrip("\n").splitlines()[-TAIL_LINES:])
