"""The distribution as it would be published: built by ``python -m build`` (sdist and
wheel, from a copy of the tree so that two runs never share build/), checked by
``twine check --strict`` (the README renders), with the metadata PyPI shows."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

# one worker builds the distribution for the module (its fixture)
pytestmark = [pytest.mark.xdist_group("dist"), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for tool in ("build", "twine"):
        if subprocess.run([sys.executable, "-c", f"import {tool}"]).returncode:
            pytest.skip(f"{tool} is not installed (make test installs the dev extra)")
    tree = tmp_path_factory.mktemp("tree")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, tree / name)
    shutil.copytree(ROOT / "initd", tree / "initd",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = tree / "dist"
    subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out),
                    str(tree)], check=True, capture_output=True, timeout=240)
    return out


@pytest.mark.slow
def test_twine_passes_the_sdist_and_the_wheel(dist: Path) -> None:
    files = sorted(str(p) for p in dist.iterdir())
    assert sorted(Path(f).suffix for f in files) == [".gz", ".whl"]
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files],
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_metadata_pypi_shows(dist: Path) -> None:
    [wheel] = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = Parser().parsestr(z.read(next(n for n in names if n.endswith("METADATA")))
                                 .decode())
    assert meta["Name"] == "agent-initd"
    assert meta["License-Expression"] == "MIT"
    assert any(n.endswith("licenses/LICENSE") for n in names)
    assert meta["Requires-Python"] == ">=3.11"
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().startswith("# initd")
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Homepage", "Issues", "Documentation"} <= set(urls)
    classifiers = meta.get_all("Classifier")
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Topic :: System :: Boot :: Init" in classifiers
    # what initd reads at run time ships; tests and the build's own files do not
    assert "initd/service/openapi.yaml" in names and "initd/py.typed" in names
    assert not [n for n in names if n.startswith(("tests/", "images/", "bench/"))]
