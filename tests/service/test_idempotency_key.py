"""The Idempotency-Key over the real socket, against a real `initd service` and the real
`initd` verbs, as the IETF's draft-ietf-httpapi-idempotency-key-header says a server does
("Error Scenarios"): a key sent again with another body is refused (422, with the
reason: `rm -rf /` never gets the answer given to `ls`); sent again while the first still
runs, 409; a key that is no key (empty, a CR or LF in it) is exit 125 and one line in the
client, never sent (nothing the agent passes reaches a request's head unchecked), and a
400 from the server; a journal that cannot be written is said by the health
(``degraded``, with the reason) and by each answer (``journaled: false``)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from initd.commands import client
from tests.hooks.support import ROOT_HOME, add_hook, forget_session, git_repo, settle
from tests.service.support import INITD, call, start
from tests.support.harness import wait_for

# real services and real verbs (a Python start each): on a busy machine, minutes
pytestmark = pytest.mark.timeout(300)


class Box:
    """A workspace with a pre_tool guard (blocks `rm -rf`), a post_tool hook and a file
    hook that fails, each noting its runs; ``slow`` holds the post_tool hook until
    ``release`` exists. Its service, started by ``up``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = git_repo(root / "ws", identity=False)
        self.runs = root / "runs"
        self.runs.mkdir()
        self.sid = f"key-{uuid.uuid4().hex[:8]}"
        self.sock = str(root / "initd.sock")
        hooks = self.repo / ".discobot" / "hooks"
        add_hook(hooks, "10-guard.sh", f'echo run >> {self.runs}/guard\n'
                 'case "$(cat)" in *"rm -rf"*) echo "no rm -rf" >&2; exit 2;; esac',
                 type="pre_tool")
        add_hook(hooks, "10-post.sh", f"echo run >> {self.runs}/post\n"
                 f"while [ -e {self.runs}/slow ] && [ ! -e {self.runs}/release ]; do "
                 "sleep 0.02; done", type="post_tool")
        add_hook(hooks, "10-lint.sh", f"echo run >> {self.runs}/lint\necho bad; exit 1",
                 type="file", pattern="*.py")
        (self.repo / "a.py").write_text("x = 1\n")
        settle()
        self.service: subprocess.Popen[str] | None = None

    def up(self) -> None:
        self.service = start(self.sock, str(self.repo), self.sid)

    def count(self, name: str) -> int:
        path = self.runs / name
        return len(path.read_text().splitlines()) if path.exists() else 0

    def send(self, path: str, body: Any, key: str) -> tuple[int, Any]:
        return client.call("POST", path, body, sock=self.sock, timeout=60, key=key)

    def verb(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*INITD, *args, "--socket", self.sock], capture_output=True,
                              text=True, timeout=60)


@pytest.fixture
def box(tmp_path: Path) -> Iterator[Box]:
    made = Box(tmp_path)
    yield made
    if made.service is not None:
        made.service.send_signal(signal.SIGTERM)
        made.service.wait(30)
    forget_session(made.sid)


@pytest.mark.slow
def test_the_same_key_with_another_body_is_a_422_with_the_reason(box: Box) -> None:
    box.up()
    ls = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    rm = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
    code, first = box.send("/v1/events/pre_tool", ls, "tool-1")
    assert (code, first["blocked"], first["journaled"]) == (200, False, True)
    code, refused = box.send("/v1/events/pre_tool", rm, "tool-1")
    assert code == 422 and "different body" in refused["error"], refused
    assert box.count("guard") == 1  # no hook saw rm -rf, and it got no answer of ls's
    code, again = box.send("/v1/events/pre_tool", ls, "tool-1")  # its own body: replayed
    assert (code, again["replayed"], again["blocked"]) == (200, True, False)
    code, fresh = box.send("/v1/events/pre_tool", rm, "tool-2")  # a new key: asked
    assert (code, fresh["blocked"], fresh["reason"]) == (200, True, "no rm -rf")

    # the verb: a blockable event is blocked (its hooks never saw this body), and says why
    done = box.verb("emit", "pre_tool", "--id", "tool-1", "--data", json.dumps(rm))
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.count("\n") == 1 and "HTTP 422" in done.stderr
    assert "different body" in done.stderr
    box.send("/v1/events/post_tool", {"n": 1}, "post-1")
    done = box.verb("emit", "post_tool", "--id", "post-1", "--data", '{"n": 2}')
    assert done.returncode == 125 and done.stdout == "", done  # not blockable: 125
    assert done.stderr.count("\n") == 1 and "HTTP 422" in done.stderr

    # a turn: its body is its trigger
    code, turn = box.send("/v1/turn", {"trigger": "user"}, "turn-1")
    assert (code, turn["action"]) == (200, "reprompt")
    code, refused = box.send("/v1/turn", {"trigger": "hook"}, "turn-1")
    assert code == 422 and "different body" in refused["error"]
    done = box.verb("turn", "--trigger", "hook", "--id", "turn-1")
    assert done.returncode == 125 and done.stderr.count("\n") == 1, done
    assert box.count("lint") == 1
    health = call(box.sock, "GET", "/v1/health")[1]
    assert health["status"] == "ok", health  # a refusal is the client's, not trouble


def test_a_duplicate_sent_while_the_first_runs_is_a_409_then_gets_the_answer(box: Box
                                                                            ) -> None:
    (box.runs / "slow").touch()
    box.up()
    answers: list[tuple[int, Any]] = []
    first = threading.Thread(target=lambda: answers.append(
        box.send("/v1/events/post_tool", {"n": 1}, "dup")))
    first.start()
    try:
        wait_for(lambda: box.count("post") == 1, timeout=30, what="the first delivery's hook")
        code, busy = box.send("/v1/events/post_tool", {"n": 1}, "dup")
        assert code == 409 and "still being processed" in busy["error"], busy
        done = box.verb("emit", "post_tool", "--id", "dup", "--data", '{"n": 1}')
        assert done.returncode == 125 and done.stderr.count("\n") == 1, done
        assert "HTTP 409" in done.stderr
        code, other = box.send("/v1/events/pre_tool", {}, "another")  # other keys go on
        assert code == 200 and other["journaled"] is True
    finally:
        (box.runs / "release").touch()
        first.join(60)
    [(code, answer)] = answers
    assert (code, answer["replayed"]) == (200, False)
    code, again = box.send("/v1/events/post_tool", {"n": 1}, "dup")
    assert (code, again["replayed"], again["results"]) == (200, True, answer["results"])
    assert box.count("post") == 1


BAD_KEYS = ["", "r2\r\nX: y", "r2\nX: y", "tab\there", "a b", "\x01", "é", "x" * 201]


@pytest.mark.parametrize("key", BAD_KEYS)
def test_a_bad_key_is_exit_125_with_one_line_and_is_never_sent(tmp_path: Path, key: str
                                                               ) -> None:
    """Checked in the client before anything is sent: a listening socket that nobody
    connected to shows it. Every event (a blockable one too: the command line is wrong,
    as with a bad --data, and it says so at its first run) and every turn."""
    where = str(tmp_path / "listening.sock")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(where)
        listener.listen(8)
        listener.setblocking(False)
        for argv in (["emit", "pre_tool"], ["emit", "post_tool"], ["emit", "Stop"],
                     ["turn"]):
            done = subprocess.run([*INITD, *argv, "--id", key, "--socket", where],
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 125 and done.stdout == "", (argv, done)
            [line] = done.stderr.splitlines()  # one line, whatever the key had in it
            assert line.startswith("initd: --id ") and "Idempotency-Key" in line, line
            assert line.isprintable()
        with pytest.raises(BlockingIOError):
            listener.accept()  # nothing was sent


def test_the_server_refuses_a_bad_key_with_400_and_the_reason(box: Box) -> None:
    box.up()
    for key in (b"", b"a b", b"\x01", "é".encode(), b"x" * 201):
        head = b"POST /v1/events/post_tool HTTP/1.0\r\nIdempotency-Key: " + key + \
            b"\r\nContent-Length: 2\r\n\r\n{}"
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(30)
            conn.connect(box.sock)
            conn.sendall(head)
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
        status, _, body = answer.partition(b"\r\n\r\n")
        assert status.split(b" ")[1] == b"400", answer[:300]
        error = json.loads(body)["error"]
        assert ("a control character in a header value" if key == b"\x01" else  # (its parser's)
                "Idempotency-Key: expected 1-200 printable ASCII") in error, error
    assert box.count("post") == 0


def test_a_hook_id_the_agent_names_never_reaches_the_head_raw(tmp_path: Path) -> None:
    """``initd hooks output|rerun ID``: the id is a path segment, quoted; a CR LF in it
    forges no header (a real listener reads the head the verb sent)."""
    where = str(tmp_path / "listening.sock")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(where)
        listener.listen(8)
        for verb in ("output", "rerun"):
            proc = subprocess.Popen([*INITD, "hooks", verb, "x\r\nX-Forged: 1\r\n\r\n",
                                     "--socket", where], stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            listener.settimeout(60)
            conn, _ = listener.accept()
            with conn:
                conn.settimeout(30)
                head = b""
                while b"\r\n\r\n" not in head:
                    head += conn.recv(65536)
                conn.sendall(b'HTTP/1.0 404 Not Found\r\nContent-Length: 16\r\n\r\n'
                             b'{"error": "no"} ')
            out, err = proc.communicate(timeout=60)
            lines = head.split(b"\r\n\r\n")[0].split(b"\r\n")
            assert lines[0].startswith(b"GET /v1/hooks/x%0D%0AX-Forged" if verb == "output"
                                       else b"POST /v1/hooks/x%0D%0AX-Forged"), lines
            assert not any(b"Forged" in line for line in lines[1:]), lines
            assert proc.returncode == 1 and err.count("\n") == 1, (out, err)


def test_an_unwritable_journal_is_degraded_health_and_journaled_false(box: Box) -> None:
    """At-least-once said, never exactly-once claimed: the journal's directory cannot be
    made (a file is where it goes: a full disk, a read-only home, root as well)."""
    journal = Path(ROOT_HOME, ".discobot", box.sid, "journal")
    journal.parent.mkdir(parents=True, exist_ok=True)
    journal.write_text("not a directory\n")
    box.up()
    health = call(box.sock, "GET", "/v1/health")[1]
    assert health["status"] == "degraded", health  # at once, before any request
    [problem] = [p for p in health["problems"] if "journal" in p]
    assert str(journal) in problem and "may run its hooks again" in problem
    code, answer = box.send("/v1/events/post_tool", {}, "k-1")
    assert (code, answer["journaled"], box.count("post")) == (200, False, 1)
    code, answer = box.send("/v1/turn", {"trigger": "user"}, "t-1")
    assert (code, answer["journaled"], answer["action"]) == (200, False, "reprompt")
    done = box.verb("emit", "post_tool", "--id", "k-2")
    assert done.returncode == 0 and json.loads(done.stdout)["journaled"] is False
    assert call(box.sock, "GET", "/v1/health")[1]["status"] == "degraded"

    journal.unlink()  # writable again: what is journaled (and counted) whole clears it
    code, answer = box.send("/v1/events/post_tool", {}, "k-3")
    assert (code, answer["journaled"]) == (200, True)
    code, answer = box.send("/v1/turn", {"trigger": "user"}, "t-2")
    assert (code, answer["journaled"], answer["attempt"]) == (200, True, 1)
    health = call(box.sock, "GET", "/v1/health")[1]
    assert (health["status"], health["problems"]) == ("ok", []), health
