"""Per-hook limits on event hooks: a discobot event script's own ``limits:``, and the
image's ``hook_limits`` on a hook of another dialect (nyzhi's ``[[agent.hooks]]``, which
has no such key), each stopping a runaway hook and said in its result."""

from __future__ import annotations

from pathlib import Path

import pytest

from initd.process import limits
from tests.events.support import Workspace


@pytest.mark.slow
def test_a_discobot_event_scripts_own_cpu_limit(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    path = ws.write(".discobot/hooks/spin.sh", "#!/bin/sh\n#---\n# type: pre_tool\n"
                    "# limits: {cpu: 1}\n#---\nwhile :; do :; done\n")
    path.chmod(0o755)
    [result] = ws.fire("pre_tool", {"tool_name": "bash"})["results"]
    assert result["status"] == "failed"
    assert result["error"] == "killed by its cpu limit (1 s of CPU)"


def test_the_images_limits_bind_every_dialect(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ws.nyzhi({"event": "after_turn", "command": "head -c 3000000 /dev/zero > big"})
    ws.limits = limits.Limits(file_size=2**20)
    [result] = ws.fire("after_turn")["results"]
    assert result["error"] == "killed by its file_size limit (1 MiB)"
    assert (ws.path / "big").stat().st_size == 2**20
