"""Session hooks end to end: through `initd -- CMD` as PID 1, with a real agent user."""

from __future__ import annotations

import fcntl
import json
import os
import pwd
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.hooks.support import ROOT_HOME, add_hook
from tests.support.harness import Initd, run, wait_for
from tests.support.users import AGENT

# The status store lives in the real home of the hooks' user (~/.discobot/<session>):
# every session id a test here uses is cleared before and after it, so runs never mix.
SESSIONS = ("order", "fail", "bg", "slow", "env", "bad", "users", "crash", "cli-run",
            "stopped", "durable")


@pytest.fixture(autouse=True)
def clean_sessions() -> Iterator[None]:
    def clear() -> None:
        homes = {ROOT_HOME}
        try:
            homes.add(pwd.getpwnam(AGENT).pw_dir)
        except KeyError:
            pass
        for home in homes:
            for session in SESSIONS:
                shutil.rmtree(os.path.join(home, ".discobot", session), ignore_errors=True)
    clear()
    yield
    clear()


@pytest.fixture
def workspace() -> Iterator[Path]:
    """A workspace any user can enter (pytest's tmp_path is root's, mode 0700)."""
    path = Path(tempfile.mkdtemp(prefix="initd-ws-"))
    path.chmod(0o755)
    (path / ".discobot" / "hooks").mkdir(parents=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def hooks(ws: Path) -> Path:
    return ws / ".discobot" / "hooks"


def events(init: Initd) -> list[dict[str, object]]:
    return [json.loads(line) for line in init.stderr.splitlines() if line.startswith("{")]


def status(home: str, session: str) -> dict[str, dict[str, object]]:
    with open(os.path.join(home, ".discobot", session, "hooks", "status.json")) as f:
        return json.load(f)["hooks"]  # type: ignore[no-any-return]


def marked_running(home: str, session: str, hook_id: str) -> None:
    """Wait until status.json says the hook runs: a hook is marked once it has run for
    runner.RUNNING_MARK_AFTER (a quick one has only its result written)."""
    def running() -> bool:
        try:
            return status(home, session)[hook_id]["lastResult"] == "running"
        except (OSError, KeyError, ValueError):
            return False
    wait_for(running, what=f"{hook_id} marked running")


def initd_args(ws: Path, image: Path, session: str, *more: str) -> list[str]:
    return ["-v", "--log-format", "json", "--workspace", str(ws), "--hooks-dir", str(image),
            "--session-id", session, *more]


def test_order_image_first_then_file_names_all_before_the_agent(workspace: Path,
                                                                tmp_path: Path) -> None:
    trail = workspace / "trail"
    for directory, name in ((hooks(workspace), "20-b.sh"), (hooks(workspace), "10-a.sh"),
                            (tmp_path / "image", "90-image.sh")):
        add_hook(directory, name, f"echo {name} >> {trail}", type="session")
    init = run([*initd_args(workspace, tmp_path / "image", "order"), "--", "cat", str(trail)])
    assert init.code == 0, init.stderr
    assert init.stdout_lines == ["90-image.sh", "10-a.sh", "20-b.sh"]


@pytest.mark.slow
def test_every_result_is_written_before_the_agent_starts(initd, workspace: Path,
                                                         tmp_path: Path) -> None:
    """Results are written while the next hook runs (phase.Recorder), and all of them
    before the agent starts. Ordered, not timed: the test holds status.json's lock, so
    no result can be written; the hooks all run, and the agent still waits until the
    lock is let go; then it finds every result, in the order the hooks ran."""
    for i in range(30):
        add_hook(hooks(workspace), f"{i:02d}.sh", "exit 3" if i == 17 else "true",
                 type="session")
    add_hook(hooks(workspace), "99-last.sh", f"touch {workspace}/ran-last", type="session")
    place = Path(ROOT_HOME, ".discobot", "durable", "hooks")
    place.mkdir(parents=True)
    with open(place / ".status.json.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        init = initd([*initd_args(workspace, tmp_path / "image", "durable"), "--", "sh",
                      "-c", f"echo agent-up; cat {place / 'status.json'}"])
        wait_for(lambda: (workspace / "ran-last").exists(), what="the last hook")
        with pytest.raises(AssertionError, match="no line matching"):
            init.expect("^agent-up$", timeout=1)  # (a second to show it would not wait)
    init.expect("^agent-up$")
    assert init.wait() == 0, init.stderr
    seen = json.loads("".join(init.stdout_lines[1:]))["hooks"]
    assert list(seen) == [*(f"{i:02d}" for i in range(30)), "99-last"]
    assert [entry["lastResult"] for entry in seen.values()] == \
        ["failure" if i == 17 else "success" for i in range(31)]
    assert seen["17"]["lastExitCode"] == 3


def test_a_result_is_written_while_the_next_hook_runs(workspace: Path, tmp_path: Path) -> None:
    """Results wait a moment for the ones that follow, to go in one write (phase.GATHER),
    but never for the phase's end: a person watching a long phase sees each result while
    the next hook runs. Ordered, not timed: the second hook runs until status.json shows
    the first one's result (its own deadline, far past GATHER), then says so."""
    status = Path(ROOT_HOME, ".discobot", "watched", "hooks", "status.json")
    add_hook(hooks(workspace), "10-first.sh", "exit 4", type="session")
    add_hook(hooks(workspace), "20-watch.sh",
             f"for i in $(seq 600); do grep -q '\"lastExitCode\": 4' {status} 2>/dev/null "
             f"&& echo seen > {workspace}/seen && exit 0; sleep 0.05; done; exit 1",
             type="session")
    init = run([*initd_args(workspace, tmp_path / "image", "watched"), "--", "true"])
    assert init.code == 0, init.stderr
    assert (workspace / "seen").read_text() == "seen\n"
    assert json.loads(status.read_text())["hooks"]["20-watch"]["lastResult"] == "success"


def test_failing_hook_is_recorded_and_boot_continues(workspace: Path, tmp_path: Path) -> None:
    add_hook(hooks(workspace), "10-fail.sh", "echo broken thing; exit 3", type="session",
             name="Breaker")
    add_hook(hooks(workspace), "20-ok.sh", "echo fine", type="session")
    init = run([*initd_args(workspace, tmp_path, "fail"), "--", "sh", "-c", "exit 7"])
    assert init.code == 7  # the agent's code, not the hook's
    failed = [e for e in events(init) if e["event"] == "hook failed"]
    assert failed and failed[0]["exit_code"] == 3
    assert failed[0]["output_tail"] == "broken thing"
    assert str(failed[0]["log"]).endswith("/fail/hooks/output/10-fail.log")
    recorded = status(ROOT_HOME, "fail")
    assert recorded["10-fail"]["lastResult"] == "failure"
    assert recorded["10-fail"]["lastExitCode"] == 3
    assert recorded["20-ok"]["lastResult"] == "success"
    lines = [e["event"] for e in events(init) if str(e["event"]).startswith("[")]
    assert "[Breaker] broken thing" in lines and "[20-ok.sh] fine" in lines


def test_background_hook_does_not_hold_the_agent_and_stops_with_initd(
        initd, workspace: Path, tmp_path: Path) -> None:
    add_hook(hooks(workspace), "10-bg.sh", "echo $$ > bg.pid; exec sleep 1000",
             type="session", blocking=False)
    init = initd([*initd_args(workspace, tmp_path, "bg"), "--", *["sh", "-c",
                  f"while [ ! -s {workspace}/bg.pid ]; do sleep 0.05; done; echo agent-up; "
                  "exec sleep 1000"]], cwd=str(workspace))
    init.expect("^agent-up$")  # the agent started while the hook still runs
    marked_running(ROOT_HOME, "bg", "10-bg")
    init.signal(signal.SIGTERM)
    assert init.wait() == 128 + signal.SIGTERM
    entry = status(ROOT_HOME, "bg")["10-bg"]
    assert (entry["lastResult"], entry["cancelled"]) == ("failure", True)


@pytest.mark.slow
def test_hook_timeout_stops_it_and_the_agent_starts(workspace: Path, tmp_path: Path) -> None:
    add_hook(hooks(workspace), "10-slow.sh", "trap '' TERM; sleep 1000", type="session",
             timeout=1)
    started = time.monotonic()
    # The hook and its sleep ignore TERM: only the timeout's KILL ends them, so a boot
    # that ends at all (run's deadline, far below the sleep and the 300 s default
    # timeout) stopped the hook; its record says the timeout did it.
    init = run([*initd_args(workspace, tmp_path, "slow"), "--grace", "0.5", "--",
                "echo", "agent"])
    assert init.stdout_lines == ["agent"]
    assert time.monotonic() - started >= 1  # the hook had its timeout first
    entry = status(ROOT_HOME, "slow")["10-slow"]
    assert (entry["timedOut"], entry["lastExitCode"]) == (True, 124)


def test_environment_of_a_hook(workspace: Path, tmp_path: Path) -> None:
    add_hook(hooks(workspace), "10-env.sh",
             'echo "$DISCOBOT_SESSION_ID|$DISCOBOT_WORKSPACE|$DISCOBOT_HOOK_TYPE|'
             '${DISCOBOT_SECRET-none}|${MY_TOKEN-none}|$HTTPS_PROXY|$(pwd)" > env.out',
             type="session", run_as="root")
    env = {**os.environ, "DISCOBOT_SECRET": "s3cret", "MY_TOKEN": "t0ken",
           "HTTPS_PROXY": "http://proxy:3128"}
    init = run([*initd_args(workspace, tmp_path, "env"), "--secret", "DISCOBOT_SECRET",
                "--secret", "MY_TOKEN", "--", "true"], env=env)
    assert init.code == 0, init.stderr
    assert (workspace / "env.out").read_text().strip() == (
        f"env|{workspace}|session|none|none|http://proxy:3128|{workspace}")


def test_invalid_hook_is_reported_and_the_others_run(workspace: Path, tmp_path: Path) -> None:
    bad = add_hook(hooks(workspace), "10-bad.sh", "touch ran-bad", type="session",
                   run_as="Root")
    add_hook(hooks(workspace), "20-good.sh", "touch ran-good", type="session")
    init = run([*initd_args(workspace, tmp_path, "bad"), "--", "true"])
    assert init.code == 0
    skipped = [e for e in events(init) if e["event"] == "hook file skipped"]
    assert skipped[0]["file"] == str(bad)
    assert "run_as: expected exactly 'root' or 'user', got 'Root'" in str(skipped[0]["reason"])
    assert (workspace / "ran-good").exists() and not (workspace / "ran-bad").exists()


def test_user_and_root_hooks(workspace: Path, tmp_path: Path, agent_user: pwd.struct_passwd,
                             agent_groups: set[int]) -> None:
    locked = Path(tempfile.mkdtemp(prefix="initd-root-only-"))  # root's, 0755
    probe = (f'echo "$(id -u) $(id -G) $HOME $USER"; '
             f'if touch {locked}/$1 2>/dev/null; then echo write=ok; else echo write=denied; fi')
    add_hook(hooks(workspace), "10-root.sh", f"set -- root; {probe}", type="session",
             run_as="root")
    add_hook(hooks(workspace), "20-user.sh", f"set -- user; {probe}", type="session")
    try:
        init = run([*initd_args(workspace, tmp_path, "users"), "--user", agent_user.pw_name,
                    "--", "true"])
        assert init.code == 0, init.stderr
        home = agent_user.pw_dir
        root_log, user_log = (Path(home, ".discobot/users/hooks/output", f"{n}.log").read_text()
                              for n in ("10-root", "20-user"))
        # a root hook keeps initd's own user and HOME (the run's, tests/conftest.py)
        assert root_log.splitlines() == [f"0 0 {os.environ['HOME']} root", "write=ok"]
        uid, *groups, user_home, user = user_log.splitlines()[0].split()
        assert int(uid) == agent_user.pw_uid
        assert {int(g) for g in groups} == agent_groups
        assert (user_home, user) == (home, agent_user.pw_name)
        assert user_log.splitlines()[1] == "write=denied"
        assert (locked / "root").exists() and not (locked / "user").exists()
        tree = Path(home, ".discobot", "users", "hooks")
        for path in (tree, tree / "status.json", tree / "output" / "20-user.log"):
            assert path.stat().st_uid == agent_user.pw_uid, path
    finally:
        shutil.rmtree(locked)


@pytest.mark.slow
def test_hook_left_running_by_a_crash_is_recovered(initd, workspace: Path,
                                                   tmp_path: Path) -> None:
    hook = add_hook(hooks(workspace), "10-long.sh", "sleep 1000", type="session")
    init = initd([*initd_args(workspace, tmp_path, "crash"), "--", "true"])
    marked_running(ROOT_HOME, "crash", "10-long")
    psutil.Process(init.proc.pid).kill()  # unshare --kill-child: the namespace dies at once
    init.proc.wait(10)
    assert status(ROOT_HOME, "crash")["10-long"]["lastResult"] == "running"
    hook.write_text(hook.read_text().replace("sleep 1000", "true"))
    again = run([*initd_args(workspace, tmp_path, "crash"), "--", "true"])
    assert any(e["event"].startswith("hook was still running") for e in events(again))
    entry = status(ROOT_HOME, "crash")["10-long"]
    # two runs: the one the crash interrupted (a failure) and this one
    assert (entry["lastResult"], entry["failCount"], entry["runCount"]) == ("success", 1, 2)
    assert "interrupted" not in entry


def test_stop_signal_during_a_session_hook_stops_it_and_skips_the_agent(
        initd, workspace: Path, tmp_path: Path) -> None:
    """docker stop while a blocking hook runs: stop now, not after the hook's 5 minutes."""
    add_hook(hooks(workspace), "10-long.sh", "echo hook-started; exec sleep 1000",
             type="session", name="Long")
    add_hook(hooks(workspace), "20-next.sh", "touch ran-next", type="session")
    init = initd([*initd_args(workspace, tmp_path, "stopped"), "--grace", "1", "--",
                  "echo", "agent-started"])
    wait_for(lambda: any(p.name() == "sleep" for p in init.descendants()), what="hook")
    init.signal(signal.SIGTERM)
    # now, not after the hook: it sleeps 1000 s (timeout 300), far past init.wait's deadline
    assert init.wait() == 128 + signal.SIGTERM
    assert "agent-started" not in init.stdout_lines
    assert not (workspace / "ran-next").exists()
    assert status(ROOT_HOME, "stopped")["10-long"]["cancelled"] is True
