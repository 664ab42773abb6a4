"""One door (invariant 8): agentfs is the only package of initd that opens, creates,
renames, removes or chowns a file by itself. Every other file-system call in initd is
listed here with the reason it never touches a tree the agent can write; a new one fails
this test until it goes through agentfs or earns its line here, after review."""

from __future__ import annotations

import ast
from pathlib import Path

import initd

PACKAGE = Path(initd.__file__).parent
OS_CALLS = {"chown", "fchown", "lchown", "open", "rename", "replace", "unlink", "remove",
            "mkdir", "makedirs", "symlink", "link", "chmod", "rmdir", "truncate", "mkfifo",
            "removedirs", "renames"}
SHUTIL_CALLS = {"chown", "rmtree", "copy", "copy2", "copyfile", "copytree", "move"}
PATH_METHODS = {"write_text", "write_bytes", "read_text", "read_bytes", "touch",
                "symlink_to", "hardlink_to"}

# (module, call) -> why it is not an agent path. Counted: a second such call in the same
# module needs its own review.
ALLOWED = {
    ("pid1/signals.py", "open"): (1, "/proc/self/status: the kernel's"),
    ("pid1/reaper.py", "open"): (1, "/proc/<pid>/stat: the kernel's"),
    ("process/procfs.py", "open"): (5, "/proc/<pid>/stat, status (twice), cmdline and "
                               "task/<tid>/children: the kernel's"),
    ("config/settings.py", "open"): (1, "/etc/initd/initd.yaml (--config): the image's, root's"),
    ("service/app.py", ".read_text"): (1, "the OpenAPI document inside the package"),
    ("http/bind.py", "os.makedirs"): (1, "the socket's directory: /run/initd, root's; "
                                              "not root, the user's own, checked after"),
    ("http/bind.py", "os.unlink"): (1, "a stale socket in /run/initd, root's; "
                                            "unlink never follows a link"),
    ("supervisor/deferred.py", "os.unlink"): (1, "the control socket root bound, in /run/initd"),
    ("commands/service.py", "os.unlink"): (1, "the socket the service bound itself, as "
                                              "itself (not root: root passes its fd)"),
    ("supervisor/roothooks.py", "shutil.rmtree"): (1, "root's own 0700 mkdtemp of hook copies"),
    ("supervisor/notify.py", "os.chmod"): (1, "root's own mkdtemp for a NOTIFY_SOCKET: 0711"),
    ("supervisor/notify.py", "shutil.rmtree"): (1, "root's own mkdtemp for a NOTIFY_SOCKET "
                                                "(its user may not write there)"),
    # a service's logger: a process of the service's user, never root's (servicelog.py
    # starts it so); in the directory root made it, whatever it opens that user may open
    ("process/svfiles.py", "os.open"): (3, "the log directory, current, a new current"),
    ("process/svfiles.py", "os.rename"): (3, "a rotation (again, once a directory planted "
                                             "there is moved aside); that move"),
    ("process/svfiles.py", "os.unlink"): (1, "what is at current and is no file to append to"),
}


def calls(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        if isinstance(fn, ast.Name) and fn.id == "open":
            found.append("open")
        elif isinstance(fn, ast.Attribute):
            owner = fn.value.id if isinstance(fn.value, ast.Name) else None
            if owner == "os" and fn.attr in OS_CALLS:
                found.append(f"os.{fn.attr}")
            elif owner == "shutil" and fn.attr in SHUTIL_CALLS:
                found.append(f"shutil.{fn.attr}")
            elif fn.attr in PATH_METHODS:
                found.append(f".{fn.attr}")
    return found


def test_only_agentfs_touches_files_by_itself() -> None:
    counted: dict[tuple[str, str], int] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module.startswith("state/agentfs/"):  # the package: its modules are the door
            continue
        for call in calls(path.read_text()):
            counted[module, call] = counted.get(module, 0) + 1
    unreviewed = {key: n for key, n in counted.items()
                  if key not in ALLOWED or n > ALLOWED[key][0]}
    assert unreviewed == {}, "file-system calls outside agentfs: route them through it"
    assert set(counted) == set(ALLOWED), "a reviewed call is gone: drop its line"


def test_nothing_but_agentfs_changes_an_owner() -> None:
    owners = [(path.name, call) for path in PACKAGE.rglob("*.py")
              if path.relative_to(PACKAGE).parts[:2] != ("state", "agentfs")
              for call in calls(path.read_text()) if "chown" in call]
    assert owners == []


def test_the_scan_sees_what_it_must() -> None:
    """The negative control: each kind of call is found."""
    source = ("import os, shutil\nopen('x')\nos.chown('x', 0, 0)\nos.replace('a', 'b')\n"
              "shutil.rmtree('d')\np.write_text('x')\n")
    assert calls(source) == ["open", "os.chown", "os.replace", "shutil.rmtree",
                             ".write_text"]
