"""What a child is started with: its Spec (argv, environment, cwd, user, stdio) and the
environment it is given.

Plain values, apart from the code that starts them (proc): a caller builds a Spec, and
only spawn.spawn turns it into a process. The stdio constants are subprocess's, under
names that say what they mean.
"""

from __future__ import annotations

import subprocess
from typing import TYPE_CHECKING, NamedTuple

from initd.process.limits import NONE as NO_LIMITS
from initd.process.limits import Limits
from initd.process.users import Account

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import IO

# the ways of saying "inherit", "/dev/null" or "a pipe"
INHERIT = None
DEVNULL = subprocess.DEVNULL
PIPE = subprocess.PIPE
STDOUT = subprocess.STDOUT  # for stderr: into the same pipe, in arrival order


class Spec(NamedTuple):
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str
    account: Account | None = None  # None: run as initd's own user
    terminal: bool = False  # give it the foreground of our controlling terminal, if any
    stdin: int | IO[bytes] | None = DEVNULL
    stdout: int | IO[bytes] | None = INHERIT
    stderr: int | IO[bytes] | None = INHERIT
    pass_fds: tuple[int, ...] = ()  # kept open in the child, at the same numbers
    # A session of its own (setsid) instead of only a group: everything it starts stays
    # in that session, so once it is gone its leftovers can be found (stop_process_session).
    new_session: bool = False
    # setrlimit in the child before it runs (initd/process/limits.py: through a trampoline)
    limits: Limits = NO_LIMITS


# Set for every hook initd starts, of every format. Python puts the working directory
# (`python3 -c`, `-m`) at the front of sys.path, and a hook's cwd is the workspace, which
# the agent writes: a `json.py` there would be imported by a root session hook's
# `python3 -c 'import json'` (a workspace on a volume carries it into the next boot).
HOOK_ENV = {"PYTHONSAFEPATH": "1"}


def environment(base: Mapping[str, str], account: Account | None,
                extra: Mapping[str, str] | None = None,
                remove: Sequence[str] = ()) -> dict[str, str]:
    """A child's environment: ``base``, the account's login variables, ``extra``; minus
    ``remove`` (secrets)."""
    env = dict(base)
    if account is not None:
        env.update(account.env())
    env.update(extra or {})
    for name in remove:
        env.pop(name, None)
    return env
