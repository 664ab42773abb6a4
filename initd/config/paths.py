"""Every place initd keeps or reads on disk by default: the control socket, the image's
config and hooks, the trust store, the state in the agent's home, the workspace's hook
directory. Standard library ``os`` only, because every exec probe (``initd ready``, every few
seconds in every pod) imports it, and so does every boot."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_SOCKET = "/run/initd/initd.sock"  # the control API, given to the agent as INITD_SOCKET
DEFAULT_CONFIG = "/etc/initd/initd.yaml"
DEFAULT_HOOKS_DIR = "/etc/initd/hooks.d"  # the image's own hooks, run before the workspace's
DEFAULT_TRUST_FILE = "/var/lib/initd/trust.json"  # root's: the agent cannot approve its hooks
STATE = ".discobot"  # initd's state, in the agent user's home: ~/.discobot/<session>/...


def workspace_hooks(workspace: str) -> str:
    """The workspace's hook directory (the image's is --hooks-dir)."""
    return os.path.join(workspace, STATE, "hooks")


def default_socket(environ: Mapping[str, str] = os.environ) -> str:
    """Where the control API listens when nobody says: root's /run/initd; anyone else
    cannot make that directory (``podman run --user 1000``, a random uid), so their own
    runtime directory, else a directory of their own in /tmp. The same answer in initd
    and in a probe run beside it (``initd health`` as the same user, same environment)."""
    uid = os.geteuid()
    if uid == 0:
        return DEFAULT_SOCKET
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    try:
        info = os.stat(runtime) if os.path.isabs(runtime) else None
    except OSError:
        info = None
    if info is not None and info.st_uid == uid:
        return os.path.join(runtime, "initd.sock")
    return f"/tmp/initd-{uid}/initd.sock"
