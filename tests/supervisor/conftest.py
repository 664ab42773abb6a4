from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.supervisor.support import Made


@pytest.fixture
def made(tmp_path: Path) -> Iterator[Made]:
    """Sets of the image's services, made from initd.yaml text, stopped afterwards."""
    sets = Made(tmp_path)
    yield sets
    sets.close()
