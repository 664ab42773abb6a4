"""A request's journal is always read back whole, however large its hooks' answers.

A hook's JSON answer is kept whole (up to 1 MiB, events/answers.py), and so is its
recorded result in the journal. Sixteen guards that each answer with 1 MiB made a
journal of 17 MiB, read back only as far as its first 8: the hooks after the cut (their
"fired" lines with them) were unknown to the event sent again after a kill, and ran a
second time. The journal now caps what it stores (initd/state/journal/): what does not fit
is said, and a step whose result was not kept is never run again; it is an error that
blocks the event (guards fail closed). A real service, killed -9 by its last hook,
the event sent again over the real socket with its key."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from initd.state.journal import READ_LIMIT, Journal
from tests.hooks.support import ROOT_HOME, add_hook, forget_session, git_repo
from tests.service.kills import Killable

GUARDS = 16
ANSWER = 1_000_000  # bytes of each guard's JSON answer (the most a hook's is kept whole)


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_sixteen_1_mib_answers_a_kill_and_a_resend_run_no_hook_twice(tmp_path: Path
                                                                      ) -> None:
    repo = git_repo(tmp_path / "ws", identity=False)
    runs = tmp_path / "runs"
    runs.mkdir()
    hooks = repo / ".discobot" / "hooks"
    for i in range(GUARDS):
        add_hook(hooks, f"{i:02d}-guard.sh", f"echo run >> {runs}/{i:02d}\n"
                 "printf '{\"decision\": \"approve\", \"reason\": \"'\n"
                 f"head -c {ANSWER} /dev/zero | tr '\\0' x\nprintf '\"}}'", type="pre_tool")
    add_hook(hooks, "99-kill.sh", f"echo run >> {runs}/kill\n"  # the service dies here
             f'[ -e {runs}/killed ] || {{ touch {runs}/killed; kill -9 "$(cat '
             f'{tmp_path}/victim)"; }}', type="pre_tool")
    sid = f"size-{uuid.uuid4().hex[:8]}"
    service = Killable(tmp_path, repo, sid)
    service.start()
    try:
        body = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
        status, answer, deliveries = service.request("/v1/events/pre_tool", body, "big-1")
        assert (status, deliveries, service.kills) == (200, 2, 1)
        ran = {path.name: len(path.read_text().splitlines()) for path in runs.iterdir()
               if path.name != "killed"}
        assert ran == {**{f"{i:02d}": 1 for i in range(GUARDS)}, "kill": 1}  # none twice

        journal = Path(ROOT_HOME, ".discobot", sid, "journal",
                       Journal.file_name("event", "pre_tool\0big-1"))
        assert journal.stat().st_size <= READ_LIMIT  # read back whole, always
        lines = [json.loads(line) for line in journal.read_bytes().splitlines()]
        assert sum("dropped" in line for line in lines) >= 1  # said, in its place
        errors = [r["error"] or "" for r in answer["results"]]
        kept = errors.index(next(e for e in errors if e))  # the results kept, whole
        assert kept >= 12 and errors[:kept] == [""] * kept, errors
        # the first one not kept: not known what it said, so it blocks (fails closed),
        # and the event ends there, as at any block
        assert "too large for the request's journal" in errors[kept], errors
        assert "not run again" in errors[kept] and len(errors) == kept + 1
        assert answer["blocked"] is True and answer["reason"], answer["reason"]
        assert answer["journaled"] is True

        status, again, _ = service.request("/v1/events/pre_tool", body, "big-1")
        assert status == 200 and again["results"] == answer["results"]
        assert again["blocked"] is True
        assert all(len(path.read_text().splitlines()) == 1 for path in runs.iterdir()
                   if path.name != "killed")
    finally:
        service.stop()
        forget_session(sid)
