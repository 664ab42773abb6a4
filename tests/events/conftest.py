"""The events tests' fixture: a workspace with an engine built as the service builds it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.events.support import Workspace
from tests.hooks.support import forget_session


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    workspace = Workspace(tmp_path)
    yield workspace
    if workspace.engine is not None:
        workspace.engine.shutdown()
    forget_session(workspace.sid)
