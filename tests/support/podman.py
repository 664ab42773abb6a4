"""podman for the container tests: run an image detached, exec in it, wait for it, and
say why the tests cannot run when podman or an image is missing."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import Callable


def podman(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)


def missing(*images: str) -> str | None:
    """Why the container tests cannot run here, or None."""
    if shutil.which("podman") is None:
        return "podman is not installed"
    for image in images:
        if podman("image", "exists", image).returncode != 0:
            return f"the image {image} is not built"
    return None


def skip_reason(why: str) -> str:
    return (f"cannot run here: no container tests: {why} (make image builds it; it needs "
            "root on Debian, for podman, runc and mmdebstrap)")


class Container:
    def __init__(self, image: str, *args: str, cmd: list[str] | None = None,
                 name: str | None = None, initd: str = "initd") -> None:
        """``podman run -d`` of ``image``; with ``name``, one already running (a pod's,
        started by podman kube play). ``initd`` is how the image's PATH reaches it."""
        self.initd = initd
        if name is not None:
            self.name = name
            return
        self.name = f"initd-e2e-{uuid.uuid4().hex[:8]}"
        out = podman("run", "-d", "--name", self.name, *args, image, *(cmd or []))
        assert out.returncode == 0, out.stderr
        from tests.support import logtails  # (a failed test shows the container's log)

        logtails.started(lambda: f"$ podman logs {self.name} (its end)\n"
                                 f"{logtails.tail(self.logs())}")

    def exec(self, *args: str, user: str | None = None, timeout: float = 30
             ) -> subprocess.CompletedProcess[str]:
        return podman("exec", *(["--user", user] if user else []), self.name, *args,
                      timeout=timeout)

    def until(self, probe: Callable[[], bool], timeout: float = 30, what: str = "it"
              ) -> None:
        deadline = time.monotonic() + timeout
        while not probe():
            assert time.monotonic() < deadline, f"timed out waiting for {what}: " \
                f"{self.logs()[-2000:]}"
            time.sleep(0.2)

    def ready(self) -> None:
        self.until(lambda: self.exec(self.initd, "ready").returncode == 0,
                   what="initd ready")

    def logs(self) -> str:
        out = podman("logs", self.name)
        return out.stdout + out.stderr

    def exit_code(self) -> int:
        podman("wait", self.name, timeout=60)
        return int(podman("inspect", self.name, "--format", "{{.State.ExitCode}}")
                   .stdout.strip())

    def remove(self) -> None:
        podman("rm", "-f", "-t", "0", self.name)


def assert_commits_are_gated(c: Container) -> None:
    """The managed pre-commit chain in ``c``'s /workspace, with a hook rejecting "TODO":
    a commit saying it is rejected, the fixed one goes in (both as the agent)."""
    assert "discobot:managed" in c.exec("cat", "/workspace/.git/hooks/pre-commit").stdout
    todo = c.exec("sh", "-c", "echo 'TODO: later' > t.md && git add t.md && "
                  "git commit -qm t", user="agent")
    assert todo.returncode != 0 and "commit rejected" in todo.stdout + todo.stderr
    fixed = c.exec("sh", "-c", "echo done > t.md && git add t.md && git commit -qm t",
                   user="agent")
    assert fixed.returncode == 0, fixed.stderr
