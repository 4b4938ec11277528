"""The packages a wheel holds, found rather than listed: every folder with an `__init__.py` under each
folder pyproject.toml's package-dir maps into the `lakehouse` namespace (models/ and its topic folders,
sim/python, ...), so that a new topic is its folder alone.  setuptools' own search names a package by
its folder's path, which for a mapped folder (models/ is `lakehouse.models`) is the wrong name; the rest
of the build is declared in pyproject.toml."""

from __future__ import annotations

import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def packages() -> list[str]:
    """Every package under the mapped folders, by its name in the namespace, in order."""
    mapped = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    found = set()
    for package, folder in mapped.items():
        root = HERE / folder
        for init in root.rglob("__init__.py"):
            inner = init.parent.relative_to(root).parts
            if "__pycache__" not in inner and not any(part.startswith(".") for part in inner):
                found.add(".".join((package, *inner)))
    return sorted(found)


if __name__ == "__main__":
    from setuptools import setup

    setup(packages=packages())
