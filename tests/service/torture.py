"""The exactly-once torture (test_exactly_once_torture.py): a workspace whose hooks note
each run with the request's key, a seeded schedule of requests and kills, and a model of
what the answers' counters should say.

Hooks (each appends ``KEY [what it read]`` to ``runs/<name>``, and kills the service
with -9 when its name is in ``doom``: a kill while a hook runs):

* pre_tool: ``audit`` (passes), ``guard`` (blocks a command with ``rm -rf``);
* file hooks (a turn): ``fmt`` (passes), ``lint`` (always fails: a re-prompt, until the
  loop guard says no); a file hook cannot see the request, so the turn's key is in
  ``turn-key``;
* Claude Code: ``stop`` on Stop (always blocks, with exit 2: the Stop loop's cap ends
  it), ``prompt`` on UserPromptSubmit (which starts the Stop count again).
"""

from __future__ import annotations

import collections
import json
import random
import time
from pathlib import Path
from typing import Any, NamedTuple

from initd.events.stoploop import CAP
from initd.state.journal import Journal
from tests.hooks.support import git_repo
from tests.service.kills import Killable, kill_at

LIMIT = 3  # re-prompts per user message (the service's default)
KINDS = {"pre_tool": 0.24, "turn": 0.22, "user_turn": 0.05, "stop": 0.44,
         "prompt": 0.05}
HOOKS = {"pre_tool": ("audit", "guard"), "turn": ("fmt", "lint"),
         "user_turn": ("fmt", "lint"), "stop": ("stop",), "prompt": ("prompt",)}
IN_HOOK, AT_WRITE, AGAIN = 0.10, 0.12, 0.25  # chances of a kill: its kind, on a resend
WRITES = 24  # a request's writes a kill may land before (the later ones: a later request)


class Plan(NamedTuple):
    kind: str
    key: str
    doom: str | None  # the hook that kills the service while it runs
    writes: tuple[int, ...]  # killed before the Nth write, on each delivery in turn
    body: dict[str, Any]
    count: str = "."  # the writes counted (a regular expression of their file names)


class Bench:
    def __init__(self, root: Path) -> None:
        self.ws = git_repo(root / "ws")
        self.runs = root / "runs"
        self.runs.mkdir()
        self.doom = root / "doom"
        self.turn_key = root / "turn-key"
        note = (f'note() {{ echo "$2 $3" >> {self.runs}/$1; '
                f'if [ "$(cat {self.doom} 2>/dev/null)" = "$1" ]; then rm -f {self.doom}; '
                f'kill -9 "$(cat {root}/victim)"; fi; }}\n')
        event = note + ('in=$(cat)\nkey=$(printf %s "$in" | '
                        'sed -n \'s/.*"torture": "\\([^"]*\\)".*/\\1/p\')\n')
        turn = note + f"key=$(cat {self.turn_key})\n"
        hooks = self.ws / ".discobot" / "hooks"
        hooks.mkdir(parents=True)
        self._script(hooks / "10-audit.sh", "pre_tool", event, 'note audit "$key" -')
        self._script(hooks / "30-guard.sh", "pre_tool", event, 'note guard "$key" -\n'
                     'case "$in" in *"rm -rf"*) echo "no rm -rf" >&2; exit 2;; esac')
        self._script(hooks / "10-fmt.sh", "file", turn, 'note fmt "$key" -', pattern="*.py")
        self._script(hooks / "20-lint.sh", "file", turn,
                     'note lint "$key" -\necho "a.py: bad"\nexit 1', pattern="*.py")
        stop = self._script(root / "stop.sh", None, event,
                            'case "$in" in *\'"stop_hook_active": true\'*) a=true;; '
                            '*) a=-;; esac\nnote stop "$key" "$a"\n'
                            'echo "keep going" >&2\nexit 2')
        prompt = self._script(root / "prompt.sh", None, event, 'note prompt "$key" -')
        (self.ws / ".claude").mkdir()
        (self.ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": str(stop)}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": str(prompt)}]}]}}))
        (self.ws / "a.py").write_text("x = 0\n")

    @staticmethod
    def _script(path: Path, event: str | None, note: str, body: str, **front: str) -> Path:
        head = "" if event is None else "#---\n" + f"# type: {event}\n" + "".join(
            f"# {k}: {json.dumps(v)}\n" for k, v in front.items()) + "#---\n"
        path.write_text(f"#!/bin/sh\n{head}{note}{body}\n")
        path.chmod(0o755)
        return path

    def runs_of(self, hook: str) -> list[tuple[str, str]]:
        path = self.runs / hook
        lines = path.read_text().splitlines() if path.exists() else []
        return [(line.split(" ")[0], line.split(" ")[1]) for line in lines]

    def duplicates(self) -> dict[str, list[str]]:
        """Every (hook, key) that ran more than once."""
        found = {}
        for path in self.runs.iterdir():
            counts = collections.Counter(key for key, _ in self.runs_of(path.name))
            twice = [key for key, n in counts.items() if n > 1]
            if twice:
                found[path.name] = twice
        return found


def schedule(rng: random.Random, events: int) -> list[Plan]:
    plans = []
    for i in range(events):
        kind = rng.choices(list(KINDS), list(KINDS.values()))[0]
        key = f"{kind}-{i}-{rng.randrange(1 << 30):x}"
        roll = rng.random()
        doom = rng.choice(HOOKS[kind]) if roll < IN_HOOK else None
        writes: list[int] = []
        if IN_HOOK <= roll < IN_HOOK + AT_WRITE:
            writes.append(rng.randint(1, WRITES))
            while len(writes) < 3 and rng.random() < AGAIN:
                writes.append(rng.randint(1, WRITES))
        command = rng.choice(["ls -la", "rm -rf build", "git status", "rm -rf /"])
        plans.append(plan(kind, key, doom, tuple(writes), command))
    return plans


def plan(kind: str, key: str, doom: str | None = None, writes: tuple[int, ...] = (),
         command: str = "ls", count: str = ".") -> Plan:
    body: dict[str, Any] = {
        "pre_tool": {"tool_name": "Bash", "tool_input": {"command": command},
                     "torture": key},
        "turn": {"trigger": "hook"}, "user_turn": {"trigger": "user"},
        "stop": {"torture": key}, "prompt": {"prompt": "go on", "torture": key},
    }[kind]
    return Plan(kind, key, doom, writes, body, count)


def journal_name(plan: Plan) -> str:
    if plan.kind in ("turn", "user_turn"):
        return Journal.file_name("turn", plan.key)
    event = {"pre_tool": "pre_tool", "stop": "Stop", "prompt": "UserPromptSubmit"}[plan.kind]
    return Journal.file_name("event", f"{event}\0{plan.key}")


PATHS = {"pre_tool": "/v1/events/pre_tool", "turn": "/v1/turn", "user_turn": "/v1/turn",
         "stop": "/v1/events/Stop", "prompt": "/v1/events/UserPromptSubmit"}


class Model:
    """What the counters should say, from what each answer says ran."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self.reprompts = 0  # since the last user turn
        self.stops = 0  # blocked in a row
        self.wrong: list[str] = []

    def check(self, plan: Plan, answer: dict[str, Any]) -> None:
        if plan.kind in ("turn", "user_turn"):
            self._turn(plan, answer)
        elif plan.kind == "stop":
            self._stop(plan, answer)
        elif plan.kind == "prompt":
            self.stops = 0
        else:
            guard = _result(answer, "guard")
            wanted = "rm -rf" in plan.body["tool_input"]["command"]
            if guard is not None and not _interrupted(guard) and answer["blocked"] != wanted:
                self.wrong.append(f"{plan.key}: blocked {answer['blocked']}, not {wanted}")
        self._ran_once(plan, answer)

    def _turn(self, plan: Plan, answer: dict[str, Any]) -> None:
        if plan.kind == "user_turn":
            self.reprompts = 0
        lint = _result(answer, "lint")
        failed = lint is not None and not lint["refused"] and not lint["success"]
        if not failed:  # (interrupted: it stays pending, and no re-prompt is counted)
            want: tuple[Any, ...] = ("none", None)
        elif self.reprompts < LIMIT:
            self.reprompts += 1
            want = ("reprompt", self.reprompts)
        else:
            want = ("none", None)
        if (answer["action"], answer["attempt"]) != want:
            self.wrong.append(f"{plan.key}: {answer['action']} {answer['attempt']}, "
                              f"not {want} ({answer['evaluation']})")

    def _stop(self, plan: Plan, answer: dict[str, Any]) -> None:
        hook = _result(answer, "stop")
        read = dict(self.bench.runs_of("stop")).get(plan.key)
        if read is not None and read != ("true" if self.stops else "-"):
            self.wrong.append(f"{plan.key}: stop_hook_active {read} after {self.stops}")
        if hook is not None and not _interrupted(hook) \
                and answer["blocked"] != (self.stops < CAP):
            self.wrong.append(f"{plan.key}: blocked {answer['blocked']} after "
                              f"{self.stops} blocked in a row (cap {CAP})")
        self.stops = self.stops + 1 if answer["blocked"] else 0

    def _ran_once(self, plan: Plan, answer: dict[str, Any]) -> None:
        """A hook the answer says ran ran for this key, once; one it says was interrupted
        ran at most once (the service may have died after its "fired" line, before it
        started it)."""
        for hook in HOOKS[plan.kind]:
            result = _result(answer, hook)
            if result is None or (result.get("refused") and not _interrupted(result)):
                continue
            runs = [key for key, _ in self.bench.runs_of(hook)].count(plan.key)
            if runs > 1 or (runs == 0 and not _interrupted(result)):
                self.wrong.append(f"{plan.key}: {hook} reported, and ran {runs} times "
                                  f"({json.dumps(result)[:300]})")


WHERE = {"audit": "10-audit", "guard": "30-guard", "fmt": "10-fmt", "lint": "20-lint",
         "stop": "hooks.Stop[0]", "prompt": "hooks.UserPromptSubmit[0]"}


def _result(answer: dict[str, Any], hook: str) -> dict[str, Any] | None:
    """``hook``'s result in the answer (an event's ``hook``, a turn's ``hookId``)."""
    for result in answer["results"]:
        if WHERE[hook] in str(result.get("hook") or result.get("hookId") or ""):
            return dict(result)
    return None


def _interrupted(result: dict[str, Any]) -> bool:
    return "interrupted" in json.dumps(result)


class Figures(NamedTuple):
    events: int
    kills: int
    in_hook: int
    resends: int
    starts: int
    duplicates: dict[str, list[str]]
    wrong: list[str]
    unjournaled: int
    seconds: float


class Session:
    """The bench, its service, and the model, for a list of planned requests."""

    def __init__(self, root: Path, sid: str, tree: str | None = None) -> None:
        self.bench = Bench(root)
        self.service = Killable(root, self.bench.ws, sid, **({"tree": tree} if tree else {}))
        self.model = Model(self.bench)
        self.pending: list[Plan] = []  # not answered yet: their write kills are armed
        self.resends = self.in_hook = self.unjournaled = 0

    def armed(self) -> str | None:
        """KILL_AT for a (re)start: the write kills planned for what is still to come."""
        specs = [kill_at(journal_name(p), p.writes[0], p.count)
                 for p in self.pending if p.writes]
        return ";".join(specs) or None

    def start(self) -> None:
        self.service.restart(self.armed())

    def send(self, plan: Plan) -> dict[str, Any]:
        """``plan``'s request, sent until answered (the service started again after each
        kill, armed for the next), and checked against the model."""
        if plan.kind in ("turn", "user_turn"):
            self.bench.turn_key.write_text(plan.key)
            (self.bench.ws / "a.py").write_text(f"x = {plan.key!r}\n")  # fmt runs again
        if plan.doom:
            self.bench.doom.write_text(plan.doom)

        def again() -> str | None:
            """The next delivery's kill, if another is planned."""
            i = next(i for i, p in enumerate(self.pending) if p.key == plan.key)
            self.pending[i] = self.pending[i]._replace(writes=self.pending[i].writes[1:])
            return self.armed()

        status, answer, deliveries = self.service.request(PATHS[plan.kind], plan.body,
                                                          plan.key, again)
        self.in_hook += plan.doom is not None and not self.bench.doom.exists()
        self.bench.doom.unlink(missing_ok=True)
        self.pending = [p for p in self.pending if p.key != plan.key]
        self.resends += deliveries - 1
        assert status == 200, (plan, status, answer)
        self.unjournaled += answer.get("journaled") is not True
        self.model.check(plan, answer)
        return dict(answer)


def run(root: Path, sid: str, seed: int, events: int, tree: str | None = None) -> Figures:
    """The torture: every request sent until answered, the service killed as planned."""
    started = time.monotonic()
    session = Session(root, sid, tree)
    plans = schedule(random.Random(seed), events)
    session.pending = list(plans)
    session.start()
    try:
        for plan in plans:
            session.send(plan)
    finally:
        session.service.stop()
    return Figures(events, session.service.kills, session.in_hook, session.resends,
                   session.service.starts, session.bench.duplicates(), session.model.wrong,
                   session.unjournaled, round(time.monotonic() - started, 1))
