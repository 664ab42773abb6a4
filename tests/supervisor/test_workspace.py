"""supervisor/workspace.py: boot's steps for the workspace, each only for a workspace
that asks for it: `initd -- cmd` run tini-style inside some checkout never gets the
pre-commit chain, the devcontainer.json's commands or the service. Real directories and
hook files; settings made as a boot makes them."""

from __future__ import annotations

import os
from pathlib import Path

from initd.commands import options
from initd.config import log, settings
from initd.supervisor import workspace


def config(where: Path, *flags: str) -> settings.Settings:
    (where / "initd.yaml").write_text("{}\n")  # (not the machine's /etc/initd)
    cwd = os.getcwd()
    os.chdir(where)
    try:
        return settings.load(options.parse([*flags, "--config", str(where / "initd.yaml"),
                                            "--hooks-dir", str(where / "image-hooks"),
                                            "--", "true"]),
                             {"HOME": str(where), "PATH": "/usr/bin:/bin"})
    finally:
        os.chdir(cwd)


def test_the_chain_and_devcontainer_only_for_a_named_workspace_or_one_with_hooks(
        tmp_path: Path) -> None:
    (tmp_path / ".devcontainer.json").write_text('{"postCreateCommand": "true"}')
    plain = config(tmp_path)
    assert not workspace.wants_precommit(plain) and workspace.find_devcontainer(plain) is None
    named = config(tmp_path, "--workspace", str(tmp_path))
    assert workspace.wants_precommit(named)
    assert workspace.find_devcontainer(named) == str(tmp_path / ".devcontainer.json")
    assert not workspace.wants_precommit(config(tmp_path, "--workspace", str(tmp_path),
                                                "--no-precommit"))
    assert workspace.find_devcontainer(config(tmp_path, "--workspace", str(tmp_path),
                                              "--no-devcontainer")) is None


def test_no_repository_is_found_without_git_and_none_is_imported(tmp_path: Path) -> None:
    named = config(tmp_path, "--workspace", str(tmp_path))
    assert workspace.find_repo(named, None, None, log.get()) is None  # type: ignore[arg-type]


def test_hooks_are_discovered_from_both_directories_each_bad_file_said(tmp_path: Path
                                                                       ) -> None:
    hooks = tmp_path / ".discobot" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "a.sh").write_text("#!/bin/sh\n#---\n# type: session\n#---\ntrue\n")
    (hooks / "b.sh").write_text("#!/bin/sh\n#---\n# type: nonsense\n#---\ntrue\n")
    image = tmp_path / "image-hooks"
    image.mkdir()
    (image / "c.sh").write_text("#!/bin/sh\n#---\n# type: session\n#---\ntrue\n")
    for script in (*hooks.iterdir(), *image.iterdir()):
        script.chmod(0o755)
    found = workspace.discover_hooks(config(tmp_path, "--workspace", str(tmp_path)),
                                     log.get())
    names = {Path(hook.path).name: hook for hook in found}
    assert {"a.sh", "c.sh"} <= set(names)
    assert names["a.sh"].type == "session" and names["c.sh"].type == "session"
    assert "b.sh" not in names  # (a problem, said in the log: not a hook)
