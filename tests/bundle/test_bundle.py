"""The bundle (make bundle): initd with its own Python, run where nothing but glibc is.

Built once for this module by images/bundle/build.py, then checked as files (what it
links, what it leaves out) and run as PID 1 of a new PID namespace whose root holds only
glibc, dash, cat and the bundle: session hooks as root and as the agent, the hook
service, the agent's clean signal state and its exit code."""

from __future__ import annotations

import os
import re
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import bundle

# one worker builds the bundle for the module (its fixture), not one for each
pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="a chroot and PID namespace "
                                 "need root"), pytest.mark.xdist_group("bundle")]

# Ubuntu 22.04's glibc: the oldest base the README promises
OLDEST_GLIBC = (2, 35)


@pytest.fixture(scope="module")
def rootfs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    why = bundle.missing()
    if why:
        pytest.skip(f"no bundle: {why}")
    return bundle.build(tmp_path_factory.mktemp("bundle"))


@pytest.fixture(scope="module")
def home(rootfs: Path) -> Path:
    return rootfs / "opt" / "initd"


def elves(home: Path) -> Iterator[Path]:
    for path in home.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.read_bytes()[:4] == b"\x7fELF":
            yield path


def test_every_library_is_in_the_bundle_or_glibc(home: Path) -> None:
    """ldd of every ELF in it, run where it was built: nothing resolves outside the
    bundle but glibc's own libraries."""
    outside = []
    for elf in elves(home):
        for line in subprocess.run(["ldd", str(elf)], capture_output=True,
                                   text=True).stdout.splitlines():
            found = re.match(r"\s*(\S+) => (/\S+)", line)
            if found and not found[2].startswith(str(home)) and not re.match(
                    r"(libc|libm|libpthread|libdl|librt|libutil|libresolv)\.so\.", found[1]):
                outside.append(f"{elf.name}: {found[1]} => {found[2]}")
    assert outside == []


def test_nothing_needs_a_glibc_newer_than_ubuntu_22_04s(home: Path) -> None:
    """What the loader checks, read by binutils: every version a symbol is bound to and
    every version reference that is not weak is at most 2.35 (Debian 12 builds against
    2.36; images/bundle/build.py gives libexpat's one 2.36 call an older twin, and makes
    libstdc++'s weak)."""
    newest: dict[tuple[int, ...], str] = {}
    for elf in elves(home):
        out = subprocess.run(["objdump", "-p", "-T", str(elf)], capture_output=True,
                             text=True, check=True).stdout
        for flags, version in re.findall(r"0x[0-9a-f]+ (0x[0-9a-f]+) \d+ GLIBC_([\d.]+)",
                                         out):
            if not int(flags, 16) & 0x2:  # VER_FLG_WEAK
                newest[tuple(map(int, version.split(".")))] = f"{elf.name} (reference)"
        for version in re.findall(r"\*UND\*\s+\S+\s+\(?GLIBC_([\d.]+)\)?", out):
            newest[tuple(map(int, version.split(".")))] = f"{elf.name} (symbol)"
    assert max(newest) <= OLDEST_GLIBC, {v: who for v, who in newest.items()
                                         if v > OLDEST_GLIBC}


def test_expats_hash_salt_comes_from_the_older_call(home: Path) -> None:
    """libexpat's arc4random_buf (2.36) renamed getentropy (2.25): with Python's salt
    zero, expat salts itself, and the call made is getrandom(buf, 8) as both do."""
    out = subprocess.run(
        ["strace", "-f", "-e", "trace=getrandom", str(home / "bin" / "python3"), "-c",
         "import pyexpat; print('parse', flush=True); "
         "pyexpat.ParserCreate().Parse('<x a=\"1\"/>', True)"],
        capture_output=True, text=True, env={"PYTHONHASHSEED": "0"})
    assert out.returncode == 0, out.stderr
    after = out.stderr.split("parse")[-1] if "parse" in out.stderr else out.stderr
    assert re.search(r"getrandom\(.*, 8, 0\) = 8", after), out.stderr


def test_libstdcxxs_one_newer_call_is_weak_and_unversioned(home: Path) -> None:
    """libstdc++ (google-re2's runtime) calls arc4random (2.36) for one random_device
    token nothing in the bundle uses: build.py leaves it weak, so 2.35 loads the library."""
    out = subprocess.run(["objdump", "-T", str(home / "lib" / "libstdc++.so.6")],
                         capture_output=True, text=True, check=True).stdout
    assert re.findall(r"^.*\barc4random$", out, re.MULTILINE) == [
        "0000000000000000  w   DF *UND*\t0000000000000000  Base        arc4random"]


def test_it_holds_initd_python_and_no_build_leftovers(rootfs: Path, home: Path) -> None:
    assert os.readlink(rootfs / "usr" / "local" / "bin" / "initd") == "/opt/initd/initd"
    assert (home / "initd").read_text().splitlines()[0] == "#!/opt/initd/bin/python3.11 -IS"
    assert os.readlink(home / "bin" / "initd") == "../initd"  # the pre-commit callback's
    stdlib = home / "lib" / "python3.11"
    for gone in ("test", "idlelib", "tkinter", "ensurepip", "config-3.11-x86_64-linux-gnu"):
        assert not (stdlib / gone).exists(), gone
    assert (home / "lib" / "python3" / "dist-packages" / "initd" / "service" /
            "openapi.yaml").is_file()
    # byte-code for where it runs: no path of this build in any of it
    pyc = next((home / "lib" / "python3" / "dist-packages" / "initd" / "__pycache__"
                ).glob("cli.*.pyc")).read_bytes()
    assert b"/opt/initd/lib/python3/dist-packages/initd/cli.py" in pyc
    assert str(rootfs).encode() not in pyc
    # nothing anyone but root may write
    writable = [p for p in rootfs.rglob("*") if not p.is_symlink()
                and p.stat().st_mode & 0o022]
    assert writable == []


@pytest.fixture(scope="module")
def box(rootfs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The glibc-only root, with an agent user, a workspace whose session hooks say who
    ran them, and an agent that reports what it was given."""
    root = bundle.glibc_root(tmp_path_factory.mktemp("glibc-root"), rootfs)
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n"
                                         "agent:x:1000:1000::/home/agent:/bin/sh\n")
    (root / "etc" / "group").write_text("root:x:0:\nagent:x:1000:\n")
    hooks = root / "ws" / ".discobot" / "hooks"
    hooks.mkdir(parents=True)
    uid = 'while read k v rest; do [ "$k" != Uid: ] || echo "$v"; done < /proc/self/status'
    for name, run_as in (("10-root.sh", "root"), ("20-user.sh", "user")):
        (hooks / name).write_text(f"#!/bin/sh\n#---\n# type: session\n# run_as: {run_as}\n"
                                  f"#---\n{uid} > /tmp/{name}.uid\n")
        (hooks / name).chmod(0o755)
    (root / "agent.sh").write_text(textwrap.dedent("""\
        #!/bin/sh
        cat /proc/self/status
        echo "service: $(/opt/initd/initd health >/dev/null 2>&1; echo $?)"
        echo "hooks: $(cat /tmp/10-root.sh.uid) $(cat /tmp/20-user.sh.uid)"
        exit 7
        """))
    (root / "pid1.sh").write_text("#!/bin/sh\ncat /proc/1/cmdline /proc/1/maps\n")
    for script in ("agent.sh", "pid1.sh"):
        (root / script).chmod(0o755)
    for folder in ("ws", "home/agent"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        for path in [root / folder, *(root / folder).rglob("*")]:
            os.chown(path, 1000, 1000)
    return root


def boot(box: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``/opt/initd/initd ARGV`` as PID 1 of a new PID namespace rooted at ``box``."""
    return subprocess.run(
        ["unshare", "--pid", "--fork", "--mount", "--mount-proc", "--kill-child",
         f"--root={box}", "--wd=/ws", "/opt/initd/initd", "--workspace", "/ws", *argv],
        capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})


def test_initd_from_the_bundle_is_pid_1_where_there_is_only_glibc(box: Path) -> None:
    out = boot(box, "--user", "agent", "--", "/agent.sh")
    assert out.returncode == 7, out.stderr  # the agent's own exit code
    fields = {k: v.strip() for k, v in (line.split(":", 1) for line in
                                        out.stdout.splitlines() if ":" in line)}
    assert fields["Uid"].split() == ["1000"] * 4  # dropped: real, effective, saved, fs
    assert fields["SigBlk"] == fields["SigIgn"] == "0" * 16  # 32 and 33 included
    assert fields["hooks"].split() == ["0", "1000"]  # root's hook as root, the user's not
    assert fields["service"] == "0"  # the hook service, as the agent, answers it
    assert "Traceback" not in out.stderr


def test_claude_codes_filters_run_where_there_is_only_glibc(box: Path) -> None:
    """A matcher (google-re2, C++: the bundle's libstdc++ and libgcc_s, through RPATH) and
    an ``if`` rule (tree-sitter's bash grammar), as the hook service evaluates them, from
    the bundle's interpreter in the glibc-only root."""
    probe = ("from initd.events.claude import matchers\n"
             "m = matchers.matcher('pre_tool', '^Ba.h$', 'Bash(rm *)', '/ws', '/home')\n"
             "for command in ('cd x && (\\\\rm -rf y)', 'ls'):\n"
             "    print(m.matches({'tool_name': 'Bash', 'tool_input': {'command': command}}))")
    out = subprocess.run(["unshare", "--mount", f"--root={box}", "--wd=/",
                          "/opt/initd/bin/python3", "-I", "-c", probe], capture_output=True,
                         text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert (out.returncode, out.stdout.split()) == (0, ["True", "False"]), out.stderr


def test_pid_1_from_the_bundle_loads_no_compiled_dependency(box: Path) -> None:
    out = boot(box, "--", "/pid1.sh")
    assert out.returncode == 0, out.stderr
    cmdline, maps = out.stdout.split("\n", 1)
    assert cmdline.split("\0")[:3] == ["/opt/initd/bin/python3.11", "-IS", "/opt/initd/initd"]
    assert "/opt/initd/bin/python3.11" in maps
    assert "dist-packages" not in maps  # no _yaml, no psutil in PID 1


def test_root_running_a_verb_in_the_agents_workspace_imports_nothing_of_it(box: Path
                                                                          ) -> None:
    """An operator's ``podman exec … /opt/initd/initd hooks list`` as root, from the
    agent's workspace, with PYTHON* variables pointing there: the agent's planted
    modules (an ``initd`` package, ``sitecustomize``, ``yaml``, ``typing``) never run.
    (Run with no /proc mounted, where the interpreter's $ORIGIN cannot be known: its
    RPATH's second entry, /opt/initd/lib, finds its libraries.)"""
    ws = box / "ws"
    canary = "open('/tmp/owned', 'w').write('planted code ran as root')\n"
    planted = [ws / "initd" / "__init__.py", ws / "sitecustomize.py", ws / "yaml.py",
               ws / "typing.py", ws / "startup.py", ws / "lib" / "python3.11" / "os.py"]
    for path in planted:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(canary)
        os.chown(path, 1000, 1000)
    try:
        out = subprocess.run(
            ["unshare", "--mount", f"--root={box}", "--wd=/ws", "/opt/initd/initd",
             "hooks", "list", "--workspace", "/ws"], capture_output=True, text=True,
            timeout=60, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": "/ws",
                             "PYTHONSTARTUP": "/ws/startup.py", "PYTHONHOME": "/ws",
                             "PYTHONUSERBASE": "/ws", "HOME": "/ws"})
        assert out.returncode == 0, out.stderr
        assert "10-root" in out.stdout
        assert not (box / "tmp" / "owned").exists()
    finally:
        for path in planted:
            path.unlink()
        for folder in ("initd", "lib/python3.11", "lib"):
            (ws / folder).rmdir()
