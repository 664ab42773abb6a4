"""The one error family. The CLI's error boundary turns these into exit code 125."""

from __future__ import annotations


class InitdError(Exception):
    """initd's own fatal error: bad settings, unknown user, cannot fork.

    The message is one line that says what to fix.
    """

    exit_code = 125  # docker and tini use 125 for "the init itself failed"


class UsageError(InitdError):
    """Bad command line: unknown option, bad value, missing command."""
