"""Boot's guard snapshot (ARCHITECTURE.md, boot step 4b; invariant 15): the agent's hook
files of every format, as they are after the session hooks and before the agent's first
instruction, sealed in a memory file that every start of the hook service gets.

Root neither reads nor parses them: a reader started as the agent user reads them as the
hook service would (events/guardset.py) into a memory file root made, and root seals it
once the reader has exited. A workspace and home with none of those files (a dozen
``lstat``s say so) need no reader: root seals an empty snapshot itself, and the agent
starts at once. A reader that fails, or takes longer than READ_TIMEOUT, leaves a failed
snapshot: every blockable event of the session is then blocked, saying why (a guard is
never simply not there, invariant 12).
"""

from __future__ import annotations

import os
import sys

from initd.config import log, settings
from initd.process import spawn, users
from initd.supervisor.sigchan import SignalChannel

READ_TIMEOUT = 30.0  # seconds the reader may take (a dozen files, and a directory's heads)
READER = "import sys; from initd.events import guardset; sys.exit(guardset.main(sys.argv[1:]))"


def take(config: settings.Settings, account: users.Account | None, signals: SignalChannel,
         logger: log.Logger) -> int:
    """The sealed memory file holding the session's guard snapshot."""
    from initd.events import sources
    from initd.state import snapshot

    home = (account or users.current()).home
    if not sources.any_present(config.workspace, home):
        configs, directories = sources.agents(config.workspace, home)
        return snapshot.made(snapshot.Snapshot((*configs, *directories)).encode())
    fd = snapshot.memory_file()
    try:
        with log.phase(logger, "guard snapshot") as fields:
            why = _read(fd, config, account, home, signals)
            fields["result"] = why or "taken"
        if why is None:
            try:
                snapshot.seal(fd)
                return fd
            except OSError as err:  # EBUSY: the reader left a mapping (it cannot: it ended)
                why = f"it could not be sealed: {err.strerror}"
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    logger.error("the session's guards could not be read before the agent started: every "
                 "blockable event is blocked until initd's next start", reason=why)
    return snapshot.made(snapshot.Snapshot(failed=f"the guard snapshot could not be "
                                                  f"taken before the agent started: {why}")
                         .encode())


def _read(fd: int, config: settings.Settings, account: users.Account | None, home: str,
          signals: SignalChannel) -> str | None:
    """The reader, as the agent, into ``fd``; None when it wrote the snapshot, else why
    not (a stop signal meanwhile: the caller's boot ends before the agent)."""
    from initd.process import runner  # (its pipes and threads: only for a reader)

    got = runner.capture(
        [sys.executable, "-I", "-c", READER, str(fd), config.workspace, home],
        env=spawn.environment(os.environ, account, remove=config.secret), cwd="/",
        account=account, timeout=READ_TIMEOUT, grace=1.0, cancel=signals.stop,
        pass_fds=(fd,))
    if got.exec_error is not None:
        return got.exec_error
    if got.timed_out:
        return f"the reader took over {READ_TIMEOUT:g} s"
    if got.cancelled:
        return "stopped"
    if got.exit_code != 0:
        last = (got.stderr.text().strip().splitlines() or [""])[-1]
        return f"the reader exited {got.exit_code}" + (f": {last[:500]}" if last else "")
    return None
