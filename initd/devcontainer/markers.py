"""Which of devcontainer.json's once-per-container stages are done: markers in initd's
state, kept for this container's identity (container_identity), so a restart of initd in
the same container skips them and a new container sharing the state volume does not."""

from __future__ import annotations

import os
import re

from initd.devcontainer.model import Config
from initd.hooks.context import HookContext
from initd.state import agentfs
from initd.state.clock import now_iso
from initd.state.statefile import StateFile

MARKERS = "devcontainer"  # the markers' directory in initd's state


class Markers:
    """Which once-per-container stages are done, in initd's state
    (``<state>/devcontainer/lifecycle.json``): per devcontainer.json, for one container
    identity; a marker of another container counts for nothing. The file is the agent's
    when the agent is not root, and so are the commands it can make initd skip: a forged
    marker skips only what would run as the agent anyway."""

    def __init__(self, ctx: HookContext, config: Config) -> None:
        self.ctx = ctx
        self.file = StateFile(ctx.state.child(MARKERS), "lifecycle.json",
                              lambda: {"version": 1, "configs": {}})
        self.key = config.path
        self.container = container_identity()
        self.warned = False

    def done(self, stage: str) -> bool:
        try:
            mine = self.file.read().get("configs", {}).get(self.key)
        except (OSError, AttributeError):
            return False
        if not isinstance(mine, dict) or mine.get("container") != self.container:
            return False
        done = mine.get("done")
        return isinstance(done, dict) and stage in done

    def mark(self, stage: str) -> None:
        def change(data: dict[str, object]) -> None:
            configs = data.get("configs")
            if not isinstance(configs, dict):
                configs = data["configs"] = {}
            mine = configs.get(self.key)
            if not isinstance(mine, dict) or mine.get("container") != self.container \
                    or not isinstance(mine.get("done"), dict):
                mine = configs[self.key] = {"container": self.container, "done": {}}
            mine["done"][stage] = now_iso()
        try:
            self.file.update(change)
        except OSError as err:
            if not self.warned:
                self.warned = True
                self.ctx.log.warning("devcontainer: a stage done is not recorded: it runs "
                                     "again at the next start", file=self.file.path,
                                     error=str(err))


def container_identity() -> str:
    """Who this container is, as far as it can tell: podman's ``/run/.containerenv``
    id, else what the runtime mounted on /etc/hostname (Docker's and podman's are in a
    directory named by the container's id; Kubernetes' by the pod's), else the host name
    and the kernel's boot id. The same across restarts of one container; different for
    a new one (except, in the last case, one with the same host name in the same boot)."""
    text = _read_text("/run/.containerenv")
    match = re.search(r'^id="([^"]+)"', text, re.MULTILINE)
    if match:
        return f"containerenv:{match[1]}"
    for line in _read_text("/proc/self/mountinfo").splitlines():
        fields = line.split(" ")
        if len(fields) > 4 and fields[4] == "/etc/hostname" and fields[3] != "/":
            return f"hostname-mount:{fields[3]}"
    boot = _read_text("/proc/sys/kernel/random/boot_id").strip()
    return f"host:{os.uname().nodename}:{boot}"


def _read_text(path: str) -> str:
    try:
        data, _ = agentfs.read_regular(path, 2**20, whole=False)
    except OSError:
        return ""
    return data.decode(errors="replace")
