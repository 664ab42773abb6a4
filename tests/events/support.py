"""An event engine as the hook service builds it, on a real workspace, for tests; and what
a format's loader is tested with: a workspace beside a home, files put there, errors."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from initd.events import wiring
from initd.events.engine import Engine
from initd.process import limits
from tests.hooks.support import git_repo, hook_context


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = git_repo(root / "ws")
        self.sid = f"ev-{uuid.uuid4().hex[:8]}"
        self.engine: Engine | None = None
        self.home: str | None = None  # the agent's home (and the hooks' HOME), if not ours
        self.limits = limits.NONE  # the image's hook_limits

    def write(self, name: str, text: str) -> Path:
        """A file of the workspace's; a hook file written is read at the service's next
        start (the guard snapshot is the files as the session began), so the next
        ``fire`` starts a new engine, as that start would."""
        self.engine = None
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def pipeline(self, hooks: dict[str, Any], **more: Any) -> None:
        """agent-pipelines' pipeline.yaml (JSON is YAML)."""
        self.write("pipeline.yaml", json.dumps({"hooks": hooks, **more}))

    def nyzhi(self, *hooks: dict[str, Any]) -> None:
        lines = []
        for hook in hooks:
            lines.append("[[agent.hooks]]")
            lines += [f"{key} = {json.dumps(value)}" for key, value in hook.items()]
        self.write(".nyzhi/config.toml", "\n".join(lines) + "\n")

    def script(self, name: str, event: str, body: str) -> None:
        """A discobot event script in .discobot/hooks (exit 2 blocks, as Claude Code's)."""
        path = self.write(f".discobot/hooks/{name}",
                          f"#!/bin/sh\n#---\n# type: {event}\n#---\n{body}\n")
        path.chmod(0o755)

    def fire(self, event: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        if self.engine is None:
            ctx = hook_context(self.path, self.sid)
            if self.home is not None:
                ctx = ctx._replace(agent=ctx.agent._replace(home=self.home))
            ctx = ctx._replace(limits=self.limits)
            self.engine = wiring.for_context(ctx, str(self.path / "no-image"))
        return self.engine.fire(event, payload or {}).as_json()


FIXTURES = Path(__file__).parent / "fixtures"  # each format's examples, verbatim


def loader_workspace(tmp_path: Path) -> Path:
    """A bare workspace (no repository) with a home beside it (``home(ws)``)."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path / "ws"


def home(ws: Path) -> str:
    return str(ws.parent / "home")


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def errors(found: Any) -> list[str]:
    """The error lines of a loader's ``Collected``."""
    return [p.text for p in found.problems if p.severity == "error"]
