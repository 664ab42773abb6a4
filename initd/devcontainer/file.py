"""Where the workspace's devcontainer.json is: the specification's three places, in its
order of precedence (https://containers.dev/implementors/spec/#devcontainerjson):

1. ``.devcontainer/devcontainer.json``
2. ``.devcontainer.json``
3. ``.devcontainer/<folder>/devcontainer.json``, ``<folder>`` one level deep.

The first place that has one wins; the others are named in a note. In the third place
the specification names no choice: each sub-folder describes a container of its own. One
sub-folder file runs; with several, none does, and one warning names them and says how
to choose (make the one to run ``.devcontainer/devcontainer.json``). Root lists the
folder through agentfs (no link followed) and reads at most SCAN names of it: a boot
without a devcontainer.json pays at most two lstats and imports no parser.
"""

from __future__ import annotations

import os
import stat
from typing import NamedTuple

from initd.state.agentfs import Place

FOLDER = ".devcontainer"
NAME = "devcontainer.json"
FILES = (os.path.join(FOLDER, NAME), ".devcontainer.json")  # the first two places
SCAN = 1000  # names of .devcontainer/ looked at, at most
NAMED = 5  # sub-folder files named in the warning, at most (the count says the rest)


class Found(NamedTuple):
    path: str | None  # the file that runs; None: several sub-folder files, none chosen
    others: tuple[str, ...] = ()  # the files there are besides it (none of them runs)

    def why_none(self) -> str:
        """The warning when several sub-folder files leave no choice."""
        names = ", ".join(os.path.join(*path.split(os.sep)[-3:])
                          for path in self.others[:NAMED])
        if len(self.others) > NAMED:  # (one line, whatever the agent made)
            names += f" and {len(self.others) - NAMED} more"
        return (f"{len(self.others)} devcontainer.json files in sub-folders of {FOLDER} "
                f"({names}), and nothing says which one this container is: none of them "
                f"runs. To run one, make it {FILES[0]} (it comes first), or keep one "
                "sub-folder with a devcontainer.json")


def find(workspace: str) -> Found | None:
    """The workspace's devcontainer.json (Found), or None when it has none."""
    folder = os.path.join(workspace, FOLDER)
    try:
        has_folder = stat.S_ISDIR(os.lstat(folder).st_mode)
    except OSError:
        has_folder = False
    places = [os.path.join(workspace, name) for name in FILES]
    present = [path for path in places if os.path.lexists(path)]  # (a link: load says)
    below = sub_folder_files(workspace) if has_folder else []
    if present:
        return Found(present[0], (*present[1:], *below))
    if len(below) == 1:
        return Found(below[0])
    return Found(None, tuple(below)) if below else None


def sub_folder_files(workspace: str) -> list[str]:
    """``.devcontainer/<folder>/devcontainer.json``, by name; never through a link."""
    found = []
    try:
        with Place(workspace, (FOLDER,)).open() as directory, \
                os.scandir(directory.fd) as entries:
            for seen, entry in enumerate(entries):
                if seen >= SCAN:
                    break
                if entry.is_dir(follow_symlinks=False) and _has_file(workspace, entry.name):
                    found.append(os.path.join(workspace, FOLDER, entry.name, NAME))
    except OSError:  # gone, a link, not a directory: no third place
        return []
    return sorted(found)


def _has_file(workspace: str, folder: str) -> bool:
    try:
        with Place(workspace, (FOLDER, folder)).open() as directory:
            os.lstat(NAME, dir_fd=directory.fd)
    except OSError:
        return False
    return True
