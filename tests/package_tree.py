"""The installed package's layout as a tree of links, for tools that read source folders.

pyproject.toml's package-dir maps `sql/`, `models/` and the folders of `sim/` into the one `lakehouse`
namespace; mypy and import-linter know no such mapping, so they read `FOLDER/lakehouse`, whose entries
link to the repository's files.  `make lint` and tests/test_contributing_layers.py build it with this.

    python tests/package_tree.py FOLDER
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Subpackages that live outside `lakehouse/` in the repository, as pyproject.toml's package-dir maps them.
MAPPED = {
    package.removeprefix("lakehouse."): REPO / folder
    for package, folder in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ].items()
    if package != "lakehouse"
}


def build(folder: Path) -> Path:
    """Write the tree under `folder` (replacing an older one); returns the `lakehouse` folder in it."""
    package = folder / "lakehouse"
    if package.exists():
        shutil.rmtree(package)
    package.mkdir(parents=True)
    for entry in (REPO / "lakehouse").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name, source in MAPPED.items():
        (package / name).symlink_to(source)
    return package


def links_of(folder: Path) -> Path:
    """Turn `folder` (a link to a folder of the repository) into a folder of links to its entries, so
    that a test may add or replace one file in it; returns it."""
    source = folder.resolve()
    folder.unlink()
    folder.mkdir()
    for entry in source.iterdir():
        if entry.name != "__pycache__":
            (folder / entry.name).symlink_to(entry)
    return folder


def lakehouse_in(tree: Path, *args: object) -> subprocess.CompletedProcess:
    """`lakehouse ARGS` as a process that imports the package from `tree` (built by `build`)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "200"}
    command = [sys.executable, "-m", "lakehouse.cli", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=tree, timeout=300)


if __name__ == "__main__":
    build(Path(sys.argv[1]))
