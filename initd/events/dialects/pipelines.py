"""agent-pipelines' ``hooks:`` (its hook spec): the workspace's ``pipeline.yaml``, ``loop.yaml``
and ``stage.yaml``, after the global ``~/.config/agent-pipelines/hooks.yaml`` unless one of
them says ``disable_global_hooks: true``. Actions ``shell``, ``webhook`` and ``spawn``, with
``await``, ``when``, ``on_failure`` (``retries``, ``retry_delay``) and ``timeout``; the
hooks of a ``loop.yaml``/``stage.yaml`` with a ``name`` run only for events of that stage.
A ``pipelines:`` mapping defines the child pipelines ``spawn`` may name (``command``,
``timeout``)."""

from __future__ import annotations

import os
from typing import Any

from initd.config.problems import LoadError
from initd.events import sources
from initd.events.dialect import InitdRules, Where
from initd.events.loading import Collected, EventFields
from initd.events.model import EventHook, Shell, Spawn, Webhook

NAME = "pipelines"

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
DEFAULTS: dict[str, dict[str, Any]] = {  # the spec's defaults, per action type
    "shell": {"wait": False, "timeout": 300.0, "retries": 3},
    "webhook": {"wait": False, "timeout": 3600.0, "retries": 3},
    "spawn": {"wait": True, "timeout": 3600.0, "retries": 0},
}


def files(workspace: str, home: str) -> list[tuple[str, bool]]:
    """(path, written by the workspace): the global file, then the stage files."""
    return sources.owned(NAME, workspace, home)


def load(workspace: str, home: str) -> Collected:
    found = Collected(NAME)
    documents: list[tuple[str, dict[str, Any], bool]] = []
    for path, in_workspace in files(workspace, home):
        data = found.read(path, "yaml")
        if data is None:
            continue
        if not isinstance(data, dict):
            found.error(path, LoadError("expected a mapping (name, hooks, ...)", path))
            continue
        documents.append((path, data, in_workspace))
    if any(data.get("disable_global_hooks") is True for _, data, local in documents if local):
        documents = [doc for doc in documents if doc[2]]
    for path, data, in_workspace in documents:
        _pipelines(found, path, data.get("pipelines"))
        stage = data.get("name") if os.path.basename(path) != "pipeline.yaml" else None
        for event, key, actions in found.events(path, data.get("hooks") or {}, "actions"):
            for index, action in enumerate(actions):
                found.hook(path, _action, event.name, action, path, f"{key}[{index}]",
                           stage if isinstance(stage, str) else None, in_workspace,
                           event=event.name)
    for hook in found.hooks:  # a spawn must name a pipeline some file defines
        if isinstance(hook.spec, Spawn) and hook.spec.pipeline not in found.pipelines:
            found.error(hook.source, LoadError(
                f"no pipeline {hook.spec.pipeline!r} is defined (known: "
                f"{', '.join(sorted(found.pipelines)) or 'none'}; define it under "
                "pipelines:)", hook.source, f"{hook.key}.pipeline"), event=hook.event)
    found.hooks = [h for h in found.hooks
                   if not isinstance(h.spec, Spawn) or h.spec.pipeline in found.pipelines]
    return found


def _pipelines(found: Collected, path: str, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        found.error(path, LoadError("expected a mapping of name: {command, timeout}", path,
                                    "pipelines"), event=None)  # (its spawns say)
        return
    for name, definition in value.items():
        try:
            f = EventFields(definition, path, f"pipelines.{name}")
            found.pipelines[str(name)] = {"command": f.text("command", required=True),
                                          "source": path}
        except LoadError as err:  # (not a hook: a spawn that names it is, and says so)
            found.error(path, err, event=None)


def _action(event: str, data: object, path: str, key: str, stage: str | None,
            in_workspace: bool) -> EventHook:
    f = EventFields(data, path, key)
    kind = f.choice("type", tuple(DEFAULTS), "")
    if not kind:
        raise f.error("type", "required: shell, webhook or spawn")
    defaults = DEFAULTS[kind]
    on_failure = f.choice("on_failure", ("continue", "abort", "retry"), "continue")
    common: dict[str, Any] = dict(
        event=event, dialect=NAME, source=path, key=key, stage=stage,
        wait=f.flag("await", defaults["wait"]), when=f.condition("when"),
        timeout=f.number("timeout", defaults["timeout"]), on_failure=on_failure,
        retries=int(f.number("retries", defaults["retries"], positive=False, whole=True)),
        retry_delay=f.number("retry_delay", 5.0, positive=False), workspace=in_workspace)
    if kind == "shell":
        command = f.command("command")
        return EventHook(label=command, spec=Shell(command),
                         warnings=f.unknown(), **common)
    if kind == "spawn":
        pipeline = f.text("pipeline", required=True)
        return EventHook(label=f"spawn {pipeline}",
                         spec=Spawn(pipeline, f.mapping("inputs") or {}),
                         warnings=f.unknown(), **common)
    url = f.text("url", required=True)
    headers = f.mapping("headers") or {}
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise f.error("headers", "expected a mapping of header names to texts")
    port = f.number("callback_port", 8765.0, positive=False, whole=True)
    if port > 65535:
        raise f.error("callback_port", f"expected a port 0-65535 (0: any free one), got "
                      f"{int(port)}")
    spec = Webhook(url=url, method=f.choice("method", METHODS, "POST"), headers=headers,
                   body=f.get("body"), callback_port=int(port),
                   on_timeout=f.choice("on_timeout", ("abort", "continue"), "abort"))
    return EventHook(label=f"{spec.method} {url}", spec=spec,
                     warnings=f.unknown(), **common)


class Pipelines(InitdRules):
    name = NAME
    title = "agent-pipelines"

    def load(self, where: Where) -> Collected:
        return load(where.workspace, where.home)

    def files(self, where: Where) -> list[str]:
        return [path for path, _ in files(where.workspace, where.home)]


DIALECT = Pipelines()
