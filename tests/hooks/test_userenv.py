"""userEnvProbe's pure parts: the probe's output between its marks, and what of it is
merged over the container's environment (as the reference CLI's mergePaths does)."""

from __future__ import annotations

import pytest

from initd.hooks.userenv import changes, merge_paths, parse

CONTAINER = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
DEBIAN_USER = "/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games"  # /etc/profile's


@pytest.mark.parametrize(("probed", "root", "merged"), [
    # rustup's line in ~/.profile, after Debian's /etc/profile: the user's entry first;
    # the container's sbin entries are not put back for a user, as the reference CLI does
    (f"/home/u/.cargo/bin:{DEBIAN_USER}", False,
     f"/home/u/.cargo/bin:{DEBIAN_USER}"),
    (f"/home/u/.cargo/bin:{DEBIAN_USER}", True,
     "/usr/local/sbin:/home/u/.cargo/bin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:"
     "/usr/local/games:/usr/games"),
    # a container entry the profile dropped comes back after the last one both have
    ("/opt/x:/usr/bin", False, "/usr/local/bin:/opt/x:/usr/bin:/bin"),
    (CONTAINER, True, CONTAINER),
])
def test_merge_paths(probed: str, root: bool, merged: str) -> None:
    assert merge_paths(probed, CONTAINER, root) == merged


def test_parse_takes_only_what_lies_between_the_marks() -> None:
    out = b"noise MARK" + b"A=1\0B=two\nlines\0PWD=/x\0" + b"MARK more noise"
    assert parse(out, "MARK") == {"A": "1", "B": "two\nlines", "PWD": "/x"}
    assert parse(b"no marks at all", "MARK") is None


def test_changes_never_take_initds_own_nor_the_shells_noise() -> None:
    found = {"PATH": "/p:/usr/bin", "INITD_SOCKET": "/evil", "PWD": "/x", "SHLVL": "2",
             "SAME": "1", "NEW": "v"}
    env = {"PATH": "/usr/bin", "SAME": "1", "INITD_SOCKET": "/run/initd/initd.sock"}
    assert changes(found, env, lambda name: name.startswith("INITD_")) == {
        "PATH": "/p:/usr/bin", "NEW": "v"}
