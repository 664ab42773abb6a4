"""What a failed exec means, as sh says it: 127 when the command is not found, 126 when it
cannot be executed, with one line saying why (and what the user most likely meant); a
failure that is not the command's (its working directory, /dev/null) is initd's own."""

from __future__ import annotations

import errno
import os

from initd import VERBS
from initd.errors import InitdError
from initd.process.spec import Spec


class ExecFailed(InitdError):
    """The command could not be executed: 127 not found, 126 not executable (as sh does)."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code  # 126 or 127 instead of InitdError's 125


def exec_failure(spec: Spec, err: OSError) -> InitdError:
    """Why ``spec``'s command did not start (``err``: what exec, or the cwd, said)."""
    name = spec.argv[0]
    # `initd /tmp` from /tmp: not the cwd's fault (a relative name: from the child's cwd)
    if "/" in name and os.path.isdir(os.path.join(spec.cwd, name)):
        return ExecFailed(f"{name}: Is a directory", 126)
    if err.filename == spec.cwd:
        return InitdError(f"cannot enter working directory {spec.cwd}: {err.strerror}")
    if err.filename not in (None, name):  # not the command's fault: /dev/null, say
        return InitdError(f"cannot start {name}: {err.filename}: {err.strerror}")
    if err.errno in (errno.ENOENT, errno.ENOTDIR):
        return ExecFailed(f"{name}: No such file or directory{_hint(name)}", 127)
    if err.errno in (errno.EACCES, errno.ENOEXEC, errno.EISDIR, errno.EPERM):
        return ExecFailed(f"{name}: {err.strerror}", 126)
    return InitdError(f"cannot start {name}: {err.strerror}")


def _hint(name: str) -> str:
    """What the user most likely meant, for two commands that are not found."""
    if name in VERBS:
        return (f" (hint: initd's verbs come first, before any option: initd {name} …; "
                f"a program called {name} needs its path)")
    if name.startswith("-"):
        return (" (hint: everything after -- is CMD; an image whose ENTRYPOINT is "
                "[\"initd\", \"--\"] takes `podman run IMAGE --version` as a program called "
                "--version: use podman run --entrypoint initd IMAGE --version)")
    return ""
