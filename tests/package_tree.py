"""The installed package's layout as a tree of links, for tools that read source folders.

pyproject.toml's package-dir maps `sql/`, `models/` and the folders of `sim/` into the one `lakehouse`
namespace; mypy and import-linter know no such mapping, so they read `FOLDER/lakehouse`, whose entries
link to the repository's files.  `make lint` and tests/test_layers.py build it with this.

    python tests/package_tree.py FOLDER
"""

from __future__ import annotations

import shutil
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


if __name__ == "__main__":
    build(Path(sys.argv[1]))
