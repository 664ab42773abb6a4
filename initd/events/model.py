"""A hook on a lifecycle event, from any dialect, as the engine runs it. The events
themselves (names, aliases, which may be blocked) are in initd/hooks/kinds.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

from initd.process.limits import NONE as NO_LIMITS
from initd.process.limits import Limits

if TYPE_CHECKING:
    from initd.events.claude.matchers import Matcher
    from initd.events.conditions import Condition


# A hook format's name, as every answer and listing shows it: the key of its Dialect in
# the one registry (events/dialects/__init__.py's DIALECTS, in the order hooks run)
DialectName: TypeAlias = str
DISCOBOT = "discobot"  # initd's own format: the default of a hook made by initd


# What each action does, its own fields (a tagged union: the class is the tag). The
# field names are those the dialects have always recorded (trust hashes them).

class Shell(NamedTuple):
    command: str  # run by sh -c; {file} and ${NAME} are filled in (templates.shell)

    @property
    def action(self) -> str:
        return "shell"


class Command(NamedTuple):
    command: str  # Claude Code's: run as written (no placeholders: its $VARs are the shell's)
    shell: str = "sh"  # the shell that runs it: bash (Claude Code's default) or sh

    @property
    def action(self) -> str:
        return "command"


class Exec(NamedTuple):
    command: str  # Claude Code's exec form: resolved on PATH, spawned with args, no shell
    args: tuple[str, ...]  # each one argument as written (${CLAUDE_PROJECT_DIR} filled in)

    @property
    def action(self) -> str:
        return "command"


class AgentCommand(NamedTuple):
    """A command hook of an agent's own format (Gemini CLI's): run by ``shell -c`` as
    written, with ``env`` over its environment (the hook's own, and the agent's names for
    what initd knows), and ``inputs``: variables filled at each run from what the hook
    reads on stdin (``GEMINI_SESSION_ID``: its ``session_id``). An identical one (the
    same ``name`` and all) runs once per event."""

    command: str
    shell: str
    env: dict[str, str]
    inputs: dict[str, str]  # variable -> the stdin field it is taken from
    name: str = ""  # the agent's name for it

    @property
    def action(self) -> str:
        return "command"


class HttpHook(NamedTuple):
    url: str  # Claude Code's http hook: the event JSON POSTed here
    headers: dict[str, str]  # $VAR / ${VAR} filled in from allowed_env only
    allowed_env: tuple[str, ...]  # allowedEnvVars

    @property
    def action(self) -> str:
        return "http"


class Script(NamedTuple):
    path: str  # a discobot script, run as it is
    id: str

    @property
    def action(self) -> str:
        return "script"


class Webhook(NamedTuple):
    url: str
    method: str
    headers: dict[str, str]
    body: Any
    callback_port: int  # 0: any free port
    on_timeout: str  # abort | continue

    @property
    def action(self) -> str:
        return "webhook"


class Spawn(NamedTuple):
    pipeline: str
    inputs: dict[str, Any]

    @property
    def action(self) -> str:
        return "spawn"


class GitCommit(NamedTuple):
    message: str
    noVerify: bool

    @property
    def action(self) -> str:
        return "git-commit"


class GitPush(NamedTuple):
    remote: str
    branch: str  # "current": the branch checked out

    @property
    def action(self) -> str:
        return "git-push"


Spec: TypeAlias = (Shell | Command | Exec | AgentCommand | HttpHook | Script | Webhook | Spawn
                   | GitCommit | GitPush)


class EventHook(NamedTuple):
    """One action on one event, from any dialect, as the engine runs it."""

    event: str  # the canonical event name
    dialect: DialectName
    source: str  # the file that defines it
    key: str  # where in that file, e.g. hooks.pre_iteration[0]
    label: str  # for people: the command, the URL, the pipeline
    spec: Spec  # what it does: its action and that action's own fields
    timeout: float  # seconds
    wait: bool  # await it (False: fire-and-forget, still owned and reaped)
    when: Condition | None = None
    on_failure: str = "continue"  # continue | abort | retry
    retries: int = 0
    retry_delay: float = 5.0
    block: bool = False  # any non-zero exit blocks (a blockable event)
    exit2_blocks: bool = True  # exit 2 alone blocks (Claude Code's rule; not nyzhi's)
    on_error: str = "allow"  # a blocking hook that could not run or timed out: allow | deny
    tool_name: tuple[str, ...] = ()  # run only for these tools (case-insensitive)
    pattern: tuple[str, ...] = ()  # run only for files like these
    stage: str | None = None  # a loop.yaml's hooks: only for events of that stage
    limits: Limits = NO_LIMITS  # a discobot hook's own limits: (the image's fill the rest)
    workspace: bool = True  # defined by the workspace (trust may be required), not the image
    warnings: tuple[str, ...] = ()
    matcher: Matcher | None = None  # Claude Code's matcher and `if` rule (claude/matchers.py)
    # its format's matched hooks of the event run one after another, each reading the
    # tool's input as those before it rewrote it, when one of them says so (Gemini CLI's
    # "sequential": true); else as its dialect says (``together``: at once)
    sequential: bool = False

    @property
    def action(self) -> str:  # script | shell | command | webhook | spawn | git-commit | …
        return self.spec.action

    @property
    def where(self) -> str:
        return f"{self.source}: {self.key}"


# What a stand-in is on (StandIn.event), when not one event it names:
BLOCKABLE = "(blockable)"  # not known which: every blockable event
EVERY = "(every)"  # every event (a hooks directory not read whole)


class StandIn(NamedTuple):
    """A hook initd could not load, or may not have read (a file that does not parse or
    cannot be read, a matcher RE2 cannot run, a hooks directory too full to read): after
    the hooks that loaded, an error result in the answer of each event it may be on,
    which blocks a blockable one (invariant 12: a guard is never simply not there)."""

    source: str  # the file, or the directory not read whole
    reason: str  # the load error, naming the file (and the hook, the key)
    event: str = BLOCKABLE  # the event it names; BLOCKABLE or EVERY when not one
    dialect: DialectName = DISCOBOT

    def concerns(self, event: str, blockable: bool) -> bool:
        return self.event in (event, EVERY) or (self.event == BLOCKABLE and blockable)
