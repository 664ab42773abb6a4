"""Who a child runs as: passwd/group lookup and what a full privilege drop needs."""

from __future__ import annotations

import os
import pwd
from typing import NamedTuple

from initd.errors import InitdError


class Account(NamedTuple):
    name: str
    uid: int
    gid: int
    groups: tuple[int, ...]  # exactly the user's groups (getgrouplist), never root's
    home: str
    shell: str

    def env(self) -> dict[str, str]:
        """What login(1) would set. supervisord, s6 and runit leave HOME at root's: we don't."""
        return {"HOME": self.home, "USER": self.name, "LOGNAME": self.name,
                "SHELL": self.shell or "/bin/sh"}


def lookup(spec: str) -> Account:
    """A user by name or numeric uid; an unknown user is an error, never a guess."""
    try:
        entry = pwd.getpwnam(spec)
    except KeyError:
        entry = None
    if entry is None and spec.isdigit():
        try:
            entry = pwd.getpwuid(int(spec))
        except KeyError:
            entry = None
    if entry is None:
        raise InitdError(f"unknown user {spec!r}: no such entry in the passwd database "
                         "(create it with useradd, or fix --user/INITD_USER/AGENT_USER)")
    return Account(
        name=entry.pw_name,
        uid=entry.pw_uid,
        gid=entry.pw_gid,
        groups=tuple(os.getgrouplist(entry.pw_name, entry.pw_gid)),
        home=entry.pw_dir,
        shell=entry.pw_shell,
    )


def current() -> Account:
    """This process's own user, for hooks run without a privilege drop: HOME as the
    environment says (every program's ~, ``initd hooks list`` included), else passwd's.
    A uid with no passwd entry (OpenShift's random one, ``podman run --user 1000680000``)
    is still a user: named by its number, its groups as this process has them."""
    uid = os.geteuid()
    try:
        account = lookup(str(uid))
    except InitdError:
        account = Account(name=str(uid), uid=uid, gid=os.getegid(),
                          groups=tuple(os.getgroups()), home="/", shell="/bin/sh")
    home = os.environ.get("HOME", "")
    return account._replace(home=home) if os.path.isabs(home) else account


def agent(name: str | None) -> Account | None:
    """Who the agent is, by --user/INITD_USER/AGENT_USER: that user when this process is
    root or is that user already; else None, this process's own user. Only root can
    switch users, so an initd that is not root runs everything as itself (``podman run
    --user 1000``, a random uid), as a CLI verb run beside it does: an image's
    ``ENV INITD_USER=agent`` is no reason to fail there (the supervisor says so once)."""
    if name is None:
        return None
    if os.geteuid() == 0:
        return lookup(name)
    try:
        account = lookup(name)
    except InitdError:
        return None
    return account if account.uid == os.geteuid() else None


def become(account: Account) -> None:
    """This process, from root, becomes ``account`` for good: exactly its groups, its
    gid, its uid, its login variables. Call it before any thread starts (a thread would
    keep root's credentials)."""
    os.setgroups(list(account.groups))
    os.setgid(account.gid)
    os.setuid(account.uid)
    os.environ.update(account.env())
