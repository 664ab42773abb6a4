"""The markers of what has run in this container (initd/devcontainer/markers.py): the
container's identity is stable and says where it is from."""

from __future__ import annotations

from initd.devcontainer import markers


def test_the_container_identity_is_stable_and_says_where_it_is_from() -> None:
    first = markers.container_identity()
    assert first == markers.container_identity()
    assert first.split(":")[0] in ("containerenv", "hostname-mount", "host")
