"""--dist loadgroup sends the tests of one xdist_group to one worker by a suffix on
their node ids ("...@podman"). pytest-xdist 3.8 writes it to ``item._nodeid``, which
pytest 9.2 no longer reads (a node id is ``item._id`` now): every group was split, and
each worker built the bundle and the images again, for each test. Here the suffix is
set where pytest 9.2 reads it; a pytest-xdist that already set it is left alone.

A plugin of its own (conftest.py loads it), so that a test can run pytest with it on a
directory of its own (tests/test_parallel.py)."""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):
        return
    try:
        from _pytest.nodeid import NodeId  # (pytest 9.2; before it, xdist's own works)
    except ImportError:
        return
    for item in items:
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                        for mark in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if names and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)  # type: ignore[attr-defined]
