"""Files root parses from the agent's places are capped, depth-limited and free of YAML
aliases (invariant 8): a 600-byte alias bomb in a hook's front matter costs root nothing
and is one error line naming the file and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.attack import Agent, as_agent

# Nine levels of nine: a few hundred bytes that expand to 9**9 strings when walked.
LEVELS = "abcdefghi"
BOMB = "\n".join(
    [f'# {LEVELS[0]}: &{LEVELS[0]} ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [f"# {name}: &{name} [{', '.join(['*' + LEVELS[i]] * 9)}]"
       for i, name in enumerate(LEVELS[1:])])


def test_an_alias_bomb_in_front_matter_costs_root_nothing(boot, agent: Agent,
                                                          ws: Path) -> None:
    path = ws / ".discobot" / "hooks" / "10-bomb.sh"
    path.write_text(f"#!/bin/sh\n#---\n# type: session\n{BOMB}\n# name: *i\n#---\necho boom\n")
    path.chmod(0o755)
    assert len(path.read_bytes()) < 1024
    # (a bomb walked would not end by this deadline; its memory is the peak below)
    init = boot("sh", "-c", "grep VmHWM /proc/$PPID/status")
    assert init.wait(timeout=60) == 0, init.stderr
    assert int(init.stdout_lines[0].split()[1]) < 60 * 1024  # the supervisor's peak, KiB
    skipped = [json.loads(line) for line in init.stderr.splitlines()
               if '"hook file skipped"' in line]
    assert len(skipped) == 1 and skipped[0]["file"] == str(path)
    assert "alias" in skipped[0]["reason"]


@pytest.mark.slow
def test_a_flooded_hooks_directory_is_one_error_not_a_slow_boot(boot, agent: Agent,
                                                                ws: Path) -> None:
    """Root lists the workspace's hooks directory at boot: of 5,000 files the agent made
    there, the first 1,000 in name order are read, the rest are said in one line."""
    hooks = ws / ".discobot" / "hooks"
    as_agent(agent, f"cd {hooks} && seq 5000 | xargs touch")
    init = boot("echo", "agent ran")
    assert init.wait(timeout=60) == 0, init.stderr
    assert init.stdout_lines == ["agent ran"]
    lines = [line for line in init.stderr.splitlines() if "holds 5000 entries" in line]
    assert len(lines) == 1, init.stderr[-2000:]
