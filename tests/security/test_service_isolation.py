"""The hook service starts isolated (invariant 8): ``python -I`` from a root-owned
working directory, so a package the workspace holds (a cloned repository's ``initd/``,
``sitecustomize.py``) is never imported in its place, by the agent's service or by a
root one. (initd itself, started by its console script, has its own bin directory first
on ``sys.path``, never the working directory.)"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support.attack import Agent, boot_args

HIJACK = "import os\nopen({marker!r}, 'a').write(f'hijacked by {{os.getuid()}}\\n')\n"


@pytest.mark.parametrize("who", ["agent", "root"])
def test_a_package_in_the_workspace_never_replaces_initd(initd, agent: Agent, ws: Path,
                                                         sid: str, image: str,
                                                         who: str) -> None:
    evidence = Path(tempfile.mkdtemp(prefix="initd-atk-evidence-"))
    os.chmod(evidence, 0o777)
    marker = str(evidence / "hijacked")
    for name in ("initd/__init__.py", "initd/__main__.py", "sitecustomize.py",
                 "usercustomize.py"):
        path = ws / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(HIJACK.format(marker=marker))
    args = boot_args(agent, ws, sid, image, "--service")
    if who == "root":
        args.remove("--user")
        args.remove(agent.name)
    try:
        init = initd([*args, "--", sys.executable, "-c",
                      "from tests.support.agent_side import ready; print(ready())"],
                     cwd="/")  # as an image's ENTRYPOINT starts it: not from the workspace
        assert init.wait(timeout=60) == 0, init.stderr
        assert init.stdout_lines == ["True"], init.stderr
        assert not os.path.exists(marker), Path(marker).read_text()
    finally:
        shutil.rmtree(evidence, ignore_errors=True)
