"""The third red-team round (issue 36), from the README's threat model: each attack that
worked, acting as the agent, with what proves it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.attack import GIT_ENV, Agent, agent_script, hook
from tests.support.rules import canary, history, remote_main, run_line, runs, scratch

INITD = [sys.executable, "-m", "initd"]

GUARD = 'echo GUARD-RAN; echo "the guard says no" >&2; exit 2'
# The hook service answers in several threads, and each load of the session's guards
# replays the snapshot within workspacefiles.replaying, which kept what was in force when
# it began and put it back when it ended, for every thread at once: two loads that
# overlap (one listing the hooks, one another's) could leave the replay in force for
# good, or end it while the other still read. In force for good, the live read that
# tells a changed discobot script from the one of the start read the snapshot too, so
# the agent's own script ran as the guard. The agent lists the hooks from many threads
# at once; a file hook it adds shows whether the service still reads files as they are.
STUCK = """
    import json, os, subprocess, sys, threading, time
    from tests.support.agent_side import call, service_pid
    hooks, guard = sys.argv[1], sys.argv[2]
    service_pid()
    probe = os.path.join(hooks, "99-probe.sh")
    with open(probe, "w") as f:
        f.write("#!/bin/sh\\n#---\\n# type: file\\n# pattern: '*.x'\\n#---\\ntrue\\n")
    os.chmod(probe, 0o755)
    def listed():
        code, answer = call("GET", "/v1/hooks", timeout=30)
        return any(h["id"] == "99-probe" for h in answer["hooks"])
    seen = listed()  # the service lists the hooks as they are: the new one is there
    def churn(until):
        while time.monotonic() < until:
            call("GET", "/v1/hooks", timeout=30)
    rounds = 0
    while listed() and rounds < 12:  # (the code before: stuck in the first round)
        rounds += 1
        until = time.monotonic() + 0.5
        threads = [threading.Thread(target=churn, args=(until,)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    stuck = not listed()
    with open(guard, "w") as f:  # the guard, rewritten: it lets everything through
        f.write("#!/bin/sh\\n#---\\n# type: pre_tool\\n#---\\necho AGENTS-HOOK; exit 0\\n")
    data = json.dumps({"tool_name": "Bash", "tool_input": {"command": "rm -rf /data"}})
    out = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data",
                          data], capture_output=True, text=True, timeout=120)
    print(json.dumps({"seen": seen, "stuck": stuck, "rounds": rounds,
                      "code": out.returncode, "out": out.stdout[-3000:]}), flush=True)
"""


def test_loads_at_once_leave_no_replay_in_force(boot, agent: Agent, ws: Path) -> None:  # type: ignore[no-untyped-def]
    hooks = ws / ".discobot" / "hooks"
    guard = hook(hooks, "10-guard.sh", GUARD, owner=agent, type="pre_tool")
    for n in range(20):  # file hooks, as a project has them: each load parses them
        hook(hooks, f"{n + 20:02d}-lint.sh", "true", owner=agent, type="file",
             pattern="*.never")
    init = boot(sys.executable, agent_script(STUCK), str(hooks), str(guard))
    assert init.wait(timeout=90) == 0, init.stderr[-3000:]
    said = json.loads(init.stdout_lines[-1])
    assert said["seen"], said  # (the probe: a hook added is listed while files are read)
    assert not said["stuck"], f"the replay stayed in force after {said['rounds']} rounds"
    assert said["code"] == 2 and "AGENTS-HOOK" not in said["out"], said


# POST /v1/trust answers whether a (key, digest) pair is approved, for any key: an agent
# that can guess a hook's bytes (a common script) learned whether a person approved that
# path, anywhere: "trusted": true for a hook in a root 0700 directory of another project.
# Root answers only for a key of the workspace the service was started for.
GUESS = """
    import json, os, socket, sys
    from initd.hooks.trust import for_script
    def ask(key, digest):
        body = json.dumps({"key": key, "digest": digest}).encode()
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(os.environ["INITD_SOCKET"])
            s.sendall(b"POST /v1/trust HTTP/1.0\\r\\nContent-Type: application/json\\r\\n"
                      b"Content-Length: %d\\r\\n\\r\\n%s" % (len(body), body))
            answer = b""
            while chunk := s.recv(65536):
                answer += chunk
        return answer.decode()
    prod, guessed = sys.argv[1], sys.argv[2].encode()
    other = prod.replace("10-deploy-prod", "10-deploy-dev")
    said = {"guessed": ask(prod, for_script(prod, guessed).digest),
            "never seen": ask(other, for_script(other, guessed).digest)}
    print(json.dumps(said), flush=True)
"""


def test_the_agent_cannot_confirm_a_guess_about_another_workspace(
        boot, agent: Agent, ws: Path, image: str) -> None:  # type: ignore[no-untyped-def]
    top = Path(tempfile.mkdtemp(prefix="initd-trust-rt3-"))  # root's, 0700
    try:
        prod = top / "prod"
        (prod / ".discobot" / "hooks").mkdir(parents=True)
        script = hook(prod / ".discobot" / "hooks", "10-deploy-prod.sh", "echo deploying",
                      type="session")
        store = top / "trust.json"
        os.chmod(image, 0o755)
        out = subprocess.run([*INITD, "hooks", "trust", "--workspace", str(prod),
                              "--hooks-dir", image, "--trust-file", str(store)],
                             capture_output=True, text=True, timeout=60, env=GIT_ENV, cwd="/")
        assert out.returncode == 0 and "new " in out.stdout, out.stdout + out.stderr
        init = boot(sys.executable, agent_script(GUESS), str(script), script.read_text(),
                    more=("--trust", "--trust-file", str(store)))
        assert init.wait(timeout=60) == 0, init.stderr[-3000:]
    finally:
        shutil.rmtree(top, ignore_errors=True)
    said = json.loads(init.stdout_lines[-1])
    assert said["never seen"].startswith("HTTP/1.0 200"), said
    assert said["guessed"] == said["never seen"], said  # byte for byte: nothing learned


# A discobot guard is compared with the snapshot before it runs, but the snapshot held its
# head (the 64 KiB front matter is read from) and its size: a script past 64 KiB whose end
# the agent rewrote with as many bytes ran as the guard of the start.
TAIL = """
    import json, subprocess, sys
    from tests.support.agent_side import service_pid
    guard = sys.argv[1]
    service_pid()
    with open(guard, "r+b") as f:  # the guard's last line, as long, lets everything through
        data = f.read()
        end = b"echo GUARD-RAN; exit 2\\n"
        assert data.endswith(end)
        f.seek(len(data) - len(end))
        f.write(b"echo AGENTS-HK; exit 0\\n")
    data = json.dumps({"tool_name": "Bash", "tool_input": {"command": "rm -rf /data"}})
    out = subprocess.run([sys.executable, "-m", "initd", "emit", "pre_tool", "--data",
                          data], capture_output=True, text=True, timeout=120)
    print(json.dumps({"code": out.returncode, "out": out.stdout[-3000:]}), flush=True)
"""


def test_a_guards_body_past_its_head_is_compared_too(boot, agent: Agent, ws: Path) -> None:  # type: ignore[no-untyped-def]
    padding = "".join(f"# {n:06d} lint the workspace before any tool runs\n"
                      for n in range(2000))  # ~96 KiB of comments after the front matter
    guard = hook(ws / ".discobot" / "hooks", "10-guard.sh",
                 f"{padding}echo GUARD-RAN; exit 2", owner=agent, type="pre_tool")
    assert guard.stat().st_size > 64 * 1024
    init = boot(sys.executable, agent_script(TAIL), str(guard))
    assert init.wait(timeout=90) == 0, init.stderr[-3000:]
    said = json.loads(init.stdout_lines[-1])
    assert said["code"] == 2 and "AGENTS-HK" not in said["out"], said
    assert "changed since the session started" in said["out"], said


# A discobot guard is compared with the snapshot, then run by its path: between the two
# the agent can put another file there. It moves the hooks directory aside and flips a
# link in its place between the directory of the start and one whose guard lets all
# through; one event in ten or so is compared with the first and runs the second.
FLIP = """
    import json, os, sys, threading
    from tests.support.agent_side import call, service_pid
    ws = sys.argv[1]
    service_pid()
    d = os.path.join(ws, ".discobot")
    os.rename(os.path.join(d, "hooks"), os.path.join(d, "hooks.start"))
    os.mkdir(os.path.join(d, "hooks.mine"))
    with open(os.path.join(d, "hooks.start", "10-guard.sh")) as f:
        text = f.read()
    mine = os.path.join(d, "hooks.mine", "10-guard.sh")
    with open(mine, "w") as f:
        f.write(text.replace("exit 2", "exit 0").replace("GUARD-RAN", "AGENTS-HK"))
    os.chmod(mine, 0o755)
    done = threading.Event()
    def flip():
        while not done.is_set():
            for which in ("start", "mine"):
                os.symlink(f"hooks.{which}", os.path.join(d, "next"))
                os.rename(os.path.join(d, "next"), os.path.join(d, "hooks"))
    flipper = threading.Thread(target=flip)
    flipper.start()
    rm = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /data"}}
    allowed = 0
    for _ in range(150):
        code, answer = call("POST", "/v1/events/pre_tool", rm, timeout=60)
        allowed += code == 200 and not answer["blocked"]
    done.set()
    flipper.join()
    print(json.dumps({"allowed": allowed}), flush=True)
"""


@pytest.mark.xfail(strict=True, reason=(
    "a decision (docs/security.md, 'What the agent's own side decides'): a discobot guard "
    "is compared with the snapshot, then run by its path, which an agent racing its own "
    "guard can point elsewhere in between. Guards are for an agent that errs; the "
    "snapshot stops its rewrite, not a race. Running a sealed copy instead would change "
    "every discobot script's $0 and where it runs from"))
def test_a_guard_cannot_be_swapped_between_its_check_and_its_run(boot, agent: Agent,  # type: ignore[no-untyped-def]
                                                                 ws: Path) -> None:
    hook(ws / ".discobot" / "hooks", "10-guard.sh", GUARD, owner=agent, type="pre_tool")
    init = boot(sys.executable, agent_script(FLIP), str(ws))
    assert init.wait(timeout=90) == 0, init.stderr[-3000:]
    assert json.loads(init.stdout_lines[-1])["allowed"] == 0


# What an if rule does not read by design (docs/claude-code.md): what a file holds, which
# the line itself may write first, and code of another language. Each works for real.
FILEBORNE = [
    ("printf '#!/bin/sh\\nexec rm \"$@\"\\n' > d; chmod +x d; ./d -rf {d}", "Bash(rm *)"),
    ("cp /bin/rm ./d && ./d -rf {d}", "Bash(rm *)"),
    ("python3 -c 'import os, sys; os.execvp(\"rm\", [\"rm\", \"-rf\", sys.argv[1]])' {d}",
     "Bash(rm *)"),
    ("printf '[alias]\\n\\tp = push\\n' >> .git/config; git p -q -f origin HEAD:main",
     "Bash(git push *)"),
]


@pytest.fixture
def base(agent: Agent) -> Iterator[Path]:
    yield from scratch(agent)


@pytest.mark.xfail(strict=True, reason=(
    "by design (docs/claude-code.md): a program or git config a line writes and then runs "
    "is a file, matched by its own name, as a script a command runs; code of another "
    "language is not read (as Claude Code's permissions page says of Bash rules). Running "
    "the hook for every program named by a path (./gradlew, .venv/bin/pytest) or every "
    "interpreter would make a Bash rule match nearly every line: decided against"))
@pytest.mark.parametrize(("line", "rule"), FILEBORNE)
def test_what_a_line_writes_and_runs_is_read(agent: Agent, ws: Path, base: Path, line: str,
                                             rule: str) -> None:
    amended = history(agent, ws, base)
    target = canary(agent, base)
    attack = line.format(d=target)
    said = run_line(agent, ws, attack)
    worked = not target.exists() or remote_main(agent, base) == amended
    assert worked, f"bash did not run it, so it proves nothing: {said}"
    assert runs(rule, attack), attack


# A file hook of the session's start (end of turn) still checks each turn as it was, but it
# ran as its file is then: the agent that rewrote its last line (exit 1 to exit 0) passed
# its own check, and the model was never told.
TURN = """
    import json, subprocess, sys
    hook, changed = sys.argv[1], sys.argv[2]
    subprocess.run(["sed", "-i", "s/exit 1/exit 0/", hook], check=True, timeout=60)
    with open(changed, "w") as f:
        f.write("print(1)\\n")
    out = subprocess.run([sys.executable, "-m", "initd", "turn"], capture_output=True,
                         text=True, timeout=120)
    print(json.dumps({"code": out.returncode, "out": out.stdout, "err": out.stderr[-2000:]}),
          flush=True)
"""


def test_a_file_hook_the_agent_changed_is_its_failure(boot, agent: Agent, ws: Path) -> None:  # type: ignore[no-untyped-def]
    path = hook(ws / ".discobot" / "hooks", "20-check.sh", 'echo "the check says no"; exit 1',
                owner=agent, type="file", pattern="*.py")
    init = boot(sys.executable, agent_script(TURN), str(path), str(ws / "x.py"))
    assert init.wait(timeout=120) == 0, init.stderr[-3000:]
    turned = json.loads(init.stdout_lines[-1])
    assert turned["code"] == 2, turned  # a re-prompt: the check of the start cannot pass
    assert "20-check" in turned["out"] and "changed since the session started" in \
        turned["out"], turned
