"""devcontainer.json's variables (initd/devcontainer/env.py): the spec's ``${...}`` forms
substituted, everything else left as written."""

from __future__ import annotations

from initd.devcontainer.env import Substitution


def test_variables() -> None:
    base = {"HOME": "/root", "PATH": "/bin"}
    container = {**base, "PATH": "/opt/bin:/bin", "X": "from-container"}
    sub = Substitution(base, "/work/proj/", container)
    assert sub.text("${localEnv:HOME}|${env:HOME}|${localEnv:NOPE}|${localEnv:NOPE:d:e}") \
        == "/root|/root||d"
    assert sub.text("${containerEnv:PATH}:${containerEnv:X}") == "/opt/bin:/bin:from-container"
    assert sub.text("${containerWorkspaceFolder} ${localWorkspaceFolderBasename}") == \
        "/work/proj/ proj"
    left = "${devcontainerId} ${localHomeFolder} ${HOME} ${X:-y} $HOME ${localEnv}"
    assert sub.text(left) == left
