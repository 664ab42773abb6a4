"""An event hook and a Call to run it with, built as the engine builds them, for the tests
of the events' modules that take one (actions, answers, dialects' rules): every field
has a plain default the test overrides by name."""

from __future__ import annotations

import os
from typing import Any

from initd.config import log
from initd.events.actions import Call
from initd.events.model import EventHook, Script, Spec
from initd.process import limits


def hook(spec: Spec | None = None, **fields: Any) -> EventHook:
    """An event hook of the workspace's (``fields`` override the defaults)."""
    made = EventHook(event="pre_tool", dialect="discobot", source="/ws/hooks.yml",
                     key="hooks[0]", label="the hook", spec=spec or Script("/bin/true", "t"),
                     timeout=30.0, wait=True)
    return made._replace(**fields)


def call(spec: Spec | None = None, hook_fields: dict[str, Any] | None = None,
         **fields: Any) -> Call:
    """A Call of ``hook(spec, **hook_fields)`` in ``fields['workspace']`` (default: the
    current directory), as this process's user."""
    made = Call(hook=hook(spec, **(hook_fields or {})), event="pre_tool", payload={},
                variables={"SESSION": "s1"}, env={"PATH": os.environ.get("PATH", "/bin"),
                                                  "HOME": os.environ["HOME"]},
                workspace=os.getcwd(), state_dir=os.getcwd(), account=None, grace=1.0,
                cancel=None, limits=limits.NONE, pipelines={}, log=log.get(), stdin={})
    return made._replace(**fields)
