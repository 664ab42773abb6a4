"""What the red-team files (tests/security/test_redteam*.py) share: where a workspace's
discobot hooks live, and a root-only directory for what root hooks record."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

from tests.support.attack import root_record

HOOKS = (".discobot", "hooks")  # under the workspace: Path(ws, *HOOKS)


def records() -> Iterator[Path]:
    """For a fixture: a root-only directory (0700) where root hooks write what they ran,
    removed afterwards."""
    path = root_record()
    yield path
    shutil.rmtree(path, ignore_errors=True)
