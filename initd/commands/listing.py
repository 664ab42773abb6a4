"""``initd hooks list [--json]``: every hook of every format, with its fields and source,
then every problem, then devcontainer.json's commands (stage, when, as whom, what)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from initd.commands.options import table
from initd.errors import one_line, shown
from initd.hooks import discovery
from initd.process import users
from initd.service import views

if TYPE_CHECKING:
    from initd.devcontainer.config import Config
    from initd.events.loading import Collected
    from initd.events.model import EventHook


def list_hooks(found: discovery.Found, events: Collected, as_json: bool,
               dev: tuple[Config, users.Account, bool] | None = None) -> int:
    if as_json:
        print(json.dumps({
            "hooks": [views.hook(hook) for hook in found.hooks if not hook.is_event],
            "events": [views.event_hook(hook) for hook in events.hooks],
            "skipped": [views.skipped(p) for p in found.problems],
            "problems": [views.config_problem(p) for p in events.problems],
            "devcontainer": devcontainer_view(*dev) if dev else None}, indent=2,
            default=str))
        return 0
    rows = [("ID", "TYPE", "RUN AS", "DETAILS", "NAME", "FILE")]
    for hook in (h for h in found.hooks if not h.is_event):
        details = [f"timeout={hook.timeout:g}s"]
        if hook.type == "file":
            details += [f"pattern={hook.pattern}", f"notify_llm={str(hook.notify_llm).lower()}"]
        if hook.type == "session" and not hook.blocking:
            details.append("blocking=false")
        if hook.limits.any():
            details.append(f"limits=({hook.limits.describe()})")
        rows.append((hook.id, hook.type, hook.run_as, one_line(" ".join(details)),
                     one_line(hook.name), one_line(hook.path)))
    table(rows)
    for hook in found.hooks:
        for warning in hook.warnings:
            print(f"warning: {one_line(hook.path)}: {one_line(warning)}")
    if events.hooks:
        print()
        rows = [("EVENT", "DIALECT", "ACTION", "DETAILS", "RUNS", "WHERE")]
        rows += [(h.event, h.dialect, h.action, " ".join(_details(h)), h.label, h.where)
                 for h in events.hooks]
        table(rows)
    for problem in (*found.problems, *events.problems):
        print(problem.line())
    if dev:
        list_devcontainer(*dev)
    return 0


def _when(config: Config, stage: str) -> str:
    from initd.devcontainer import config as devcontainer

    once = "once per container" if stage in devcontainer.ONCE else "every start"
    when = "before the agent" if config.waited(stage) else "once the agent is up" \
        if stage == devcontainer.ATTACH else "in the background"
    return f"{once}, {when}"


def list_devcontainer(config: Config, agent: users.Account, enabled: bool) -> None:
    """devcontainer.json's commands: stage, when, as whom, what; then its problems."""
    from initd.devcontainer import config as devcontainer

    chosen = devcontainer.runner_for(config, agent)
    who = chosen.account.name if chosen.account is not None else "nobody"
    print()
    rows = [("HOOK", "STAGE", "WHEN", "RUN AS", "COMMAND", "FILE")]
    rows += [("devcontainer", c.label, _when(config, c.stage), who,
              one_line(f"({c.form}) {c.text}"), one_line(config.path))
             for stage in config.stages for c in stage.commands]
    if len(rows) > 1:
        table([(*row[:4], row[5], row[4]) for row in rows])  # (the command last: long)
    waited = [s for s in devcontainer.STAGES if config.waited(s)]
    print(f"devcontainer: waitFor {config.wait_for}: the agent starts after "
          f"{', '.join(waited) if waited else 'none of them'}; the later stages run in the "
          f"background, in order; a failed stage stops the ones after it")
    print(f"devcontainer: the commands run as {who}" + (
        f" ({chosen.key} {shown(chosen.named)})" if chosen.named else " (the agent user)"))
    if chosen.warning is not None:
        print(f"warning: {one_line(chosen.warning)}")
    if not enabled:
        print("note: devcontainer commands are off (--no-devcontainer, INITD_DEVCONTAINER=0)")
    for problem in config.problems:
        print(problem.line())


def devcontainer_view(config: Config, agent: users.Account, enabled: bool
                      ) -> dict[str, object]:
    from initd.devcontainer import config as devcontainer

    chosen = devcontainer.runner_for(config, agent)
    return {
        "file": config.path, "enabled": enabled, "waitFor": config.wait_for,
        "runAs": chosen.account.name if chosen.account is not None else None,
        "runAsFrom": chosen.key, "userWarning": chosen.warning,
        "commands": [{"hookId": c.hook(config).id, "stage": c.stage, "name": c.name,
                      "form": c.form, "command": list(c.args),
                      "once": c.stage in devcontainer.ONCE, "waited": config.waited(c.stage),
                      "parallel": stage.parallel}
                     for stage in config.stages for c in stage.commands],
        "timeout": config.timeout, "limits": config.limits.describe() or None,
        "containerEnv": dict(config.container_env), "remoteEnv": dict(config.remote_env),
        "notRun": list(config.ignored),
        "problems": [views.problem(p) for p in config.problems]}


def _details(hook: EventHook) -> list[str]:
    details = [f"timeout={hook.timeout:g}s"] + ([] if hook.wait else ["await=false"])
    details += [f"block={str(hook.block).lower()}"] if hook.block else []
    details += [f"when={hook.when.text!r}"] if hook.when else []
    details += [f"tool_name={','.join(hook.tool_name)}"] if hook.tool_name else []
    details += [f"pattern={','.join(hook.pattern)}"] if hook.pattern else []
    details += [f"stage={hook.stage}"] if hook.stage else []
    if hook.matcher is not None:  # Claude Code's
        details += [f"matcher={hook.matcher.text!r}"] if hook.matcher.text not in ("", "*") \
            else []
        details += [f"if={hook.matcher.rule!r}"] if hook.matcher.rule else []
    details += [f"on_failure={hook.on_failure}"] if hook.on_failure != "continue" else []
    details += [f"on_error={hook.on_error}"] if hook.on_error != "allow" else []
    return details
