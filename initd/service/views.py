"""What the control API (and the CLI's ``--json``) answers, built in one place and in
one casing (initd/state/jsonview.py: camelCase, as ``status.json``). API version 2.0.0 in
openapi.yaml; 1 had /v1/events results and /v1/hooks in snake_case."""

from __future__ import annotations

from typing import Any

from initd.config.problems import Problem
from initd.events.model import EventHook
from initd.hooks.discovery import Found
from initd.hooks.filehooks import Ran
from initd.hooks.model import Hook
from initd.process.runner import Result
from initd.state import jsonview


def hook(found: Hook) -> dict[str, Any]:
    view: dict[str, Any] = jsonview.view(found)
    view["options"] = dict(found.options)  # the front matter's own keys, as written
    return view


def event_hook(found: EventHook) -> dict[str, Any]:
    """An event hook (a condition by its text)."""
    view: dict[str, Any] = jsonview.view(found._replace(when=None))
    view.update(action=found.action, when=found.when.text if found.when else None)
    return view


def hooks(found: Found) -> dict[str, Any]:
    """``GET /v1/hooks``: every discobot hook, and every file that is not one."""
    return {"hooks": [hook(h) for h in found.hooks],
            "skipped": [skipped(problem) for problem in found.problems]}


# One Problem, three shapes, each an answer's as API 2.0.0 (and ``initd hooks list
# --json``) has always given it: a skipped file's reason names its key; a hook config's
# reason is the whole line; devcontainer.json's has the key apart.

def skipped(found: Problem) -> dict[str, Any]:
    """A file in a hooks directory that is no hook, or a broken one."""
    return {"path": found.path, "reason": found.reason, "severity": found.severity}


def config_problem(found: Problem) -> dict[str, Any]:
    """A problem of a hook config (iteratr's, nyzhi's, …): the reason is the whole line."""
    return {"path": found.path, "reason": found.text, "severity": found.severity}


def problem(found: Problem) -> dict[str, Any]:
    """A problem with its key apart (devcontainer.json's)."""
    return {"path": found.path, "key": found.key, "reason": found.reason,
            "severity": found.severity}


def ran(one: Ran) -> dict[str, Any]:
    """One file hook of a turn's evaluation."""
    r = one.result
    return {"hookId": one.hook.id, "name": one.hook.name, "success": r.ok,
            "exitCode": r.exit_code, "timedOut": r.timed_out, "cancelled": r.cancelled,
            "refused": r.refused, "error": r.exec_error, "killedByLimit": r.limit,
            "files": list(one.files), "outputPath": r.output_path,
            "durationMs": round(r.duration * 1000, 1)}


def rerun(found: Hook, result: Result) -> dict[str, Any]:
    return {"hookId": found.id, "success": result.ok, "exitCode": result.exit_code,
            "timedOut": result.timed_out, "outputPath": result.output_path}
