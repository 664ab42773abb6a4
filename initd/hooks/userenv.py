"""devcontainer.json's ``userEnvProbe``
(https://containers.dev/implementors/json_reference/#general-properties): what the
user's shell profile adds to the environment (the PATH rustup's or nvm's installer put in
``~/.profile`` or ``~/.bashrc``), probed once per boot and merged under remoteEnv for the
commands and the agent (https://containers.dev/implementors/spec/#environment-variables).

As the reference CLI does (devcontainers/cli, src/spec-common/injectHeadless.ts): the
user's passwd shell, ``-lic`` (the default, loginInteractiveShell), ``-lc``, ``-ic``, or
nothing (``none``), runs a command that prints the environment between two random
markers, so that whatever the profile prints around it is no part of it; the PATH
entries of the container's that the profile dropped (Debian's /etc/profile sets PATH
anew) are kept. Here the environment comes NUL-separated (``env -0``, else
/proc/self/environ): a value with a newline is one value. It runs as that user only,
never as root (initd runs no shell profile as root), in a session of its own (an
interactive shell finds no terminal to take), for at most TIMEOUT seconds and LIMIT
bytes of output. A probe that fails is one warning: the commands run without it.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping
from typing import NamedTuple

from initd.process import runner
from initd.process.users import Account

TIMEOUT = 10.0  # seconds (the reference CLI waits as long)
LIMIT = 2**20  # bytes of output: an environment is a few KiB
# the probing shell's own, not the user's environment
NOISE = frozenset(("PWD", "OLDPWD", "SHLVL", "_"))
NO_SHELL = frozenset(("nologin", "false"))  # an account that has no shell to probe
SBIN = re.compile(r"/sbin(/|$)")


class Probed(NamedTuple):
    changes: dict[str, str]  # what the profile set or changed
    warning: str | None = None  # why the probe failed (the commands run without it)
    note: str | None = None  # why nothing was probed, by design (said with -v)


def probe(flags: str, account: Account | None, env: Mapping[str, str], cwd: str,
          grace: float, skip: Callable[[str], bool],
          cancel: threading.Event | None = None) -> Probed:
    """The user's shell run with ``flags`` (empty: no probe) in ``env`` (what the
    commands get before remoteEnv), as ``account``; ``skip``: names never taken from it
    (initd's own, the secrets); ``cancel``: initd is stopping."""
    if not flags:
        return Probed({})
    if account is None or account.uid == 0:
        return Probed({}, note="userEnvProbe: not run: initd runs no shell profile as root")
    shell = account.shell or "/bin/sh"
    if os.path.basename(shell) in NO_SHELL:
        return Probed({}, note=f"userEnvProbe: not run: {account.name}'s shell is {shell}")
    mark = os.urandom(16).hex()
    script = f"printf %s {mark}; env -0 2>/dev/null || cat /proc/self/environ; printf %s {mark}"
    got = runner.capture((shell, flags, script), env=env, cwd=cwd, account=account,
                         timeout=TIMEOUT, grace=grace, cancel=cancel, stdout_head=LIMIT,
                         new_session=True)
    what = f"userEnvProbe: {shell} {flags} as {account.name}"
    if got.exec_error is not None:
        return Probed({}, f"{what}: {got.exec_error}")
    if got.cancelled:
        return Probed({})
    if got.timed_out:
        return Probed({}, f"{what}: no answer within {TIMEOUT:g} s (a profile that waits "
                          "for input?)")
    if got.stdout.size > LIMIT:
        return Probed({}, f"{what}: printed more than {LIMIT} bytes")
    found = parse(bytes(got.stdout.head), mark)
    if found is None:
        return Probed({}, f"{what}: printed no environment (exit {got.exit_code}): "
                          f"{got.stderr.text()[-300:].strip()!r}")
    return Probed(changes(found, env, skip, account.uid == 0))


def parse(output: bytes, mark: str) -> dict[str, str] | None:
    """The NUL-separated ``NAME=value`` between the two marks; None without them."""
    start, end = output.find(mark.encode()), output.rfind(mark.encode())
    if start < 0 or end <= start:
        return None
    found = {}
    for item in output[start + len(mark):end].split(b"\0"):
        name, sep, value = item.partition(b"=")
        if sep and name:
            found[os.fsdecode(name)] = os.fsdecode(value)
    return found


def changes(found: Mapping[str, str], env: Mapping[str, str],
            skip: Callable[[str], bool], root: bool = False) -> dict[str, str]:
    """What the probe set or changed (a variable it unset stays: the reference CLI too
    merges the probe over the container's environment)."""
    out = {name: value for name, value in found.items()
           if name not in NOISE and not skip(name) and env.get(name) != value}
    if "PATH" in out and env.get("PATH"):
        out["PATH"] = merge_paths(out["PATH"], env["PATH"], root)
    return out


def merge_paths(probed: str, container: str, root: bool = False) -> str:
    """The probe's PATH, with each entry of the container's it lacks put back after the
    entry it followed there; for a user who is not root, no ``sbin`` entry the profile
    dropped (Debian's /etc/profile leaves them out for users): as the reference CLI's
    mergePaths does (injectHeadless.ts)."""
    result = probed.split(":")
    at = 0
    for entry in container.split(":"):
        if entry in result:
            at = result.index(entry) + 1
        elif root or not SBIN.search(entry):
            result.insert(at, entry)
            at += 1
    return ":".join(result)
