"""The layers of the package, as import contracts: each layer imports only the ones below it, so the
lake's ground floor (`from lakehouse import Lake`) loads neither the compiled extension nor the models.

The contracts are checked on the source (every import statement, function-level ones included, read
with `ast`), and the ground floor's once more in a fresh interpreter (what `import` really loads).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: Where each subpackage's source lives (pyproject.toml's package-dir).
SOURCES = {"lakehouse": REPO / "lakehouse", "lakehouse.sql": REPO / "sql", "lakehouse.models": REPO / "models",
           "lakehouse.sim": REPO / "sim" / "python"}  # fmt: skip

#: The ground floor: the lake, its catalog, the table registry and the formats they name.
GROUND_FLOOR = (
    "lakehouse.lake",
    "lakehouse.catalog",
    "lakehouse.datasets",
    "lakehouse.schemas",
    "lakehouse.budget",
    "lakehouse.errors",
    "lakehouse.ingest.swf_format",
    "lakehouse.ingest.google_format",
)
#: Contracts: (modules, what they must never reach, directly or through other modules).
CONTRACTS = [
    (
        GROUND_FLOOR,
        (
            "lakehouse._native",
            "lakehouse.models",
            "lakehouse.sim",
            "lakehouse.ingest.swf",
            "lakehouse.ingest.google",
            "lakehouse.ingest.pipeline",
            "lakehouse.cli",
            "lakehouse.nightly",
            "lakehouse.synth",
            "lakehouse.demo",
            "lakehouse.export",
            "polars",
        ),
    ),  # fmt: skip
    (("lakehouse.models", "lakehouse.sim", "lakehouse.ingest"), ("lakehouse.cli", "lakehouse.nightly")),
]


def module_files() -> dict[str, Path]:
    files = {}
    for package, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join((package, *parts))
            files.setdefault(name, path)  # lakehouse/ holds no sql/, models/ or sim/python: no clash
    return files


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules (of the package, and top-level third-party ones) that a module imports anywhere."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    typing_only = {  # `if TYPE_CHECKING:` blocks import nothing when the module runs
        id(child) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for statement in node.body for child in ast.walk(statement)
    }  # fmt: skip
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base]).strip(".")
            # `from package import module` loads the module; `from module import name`, the module.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known and target.startswith("lakehouse"):
                target = target.rsplit(".", 1)[0] if "." in target else ""
            if target:
                found.add(target if target.startswith("lakehouse") else target.split(".")[0])
    return found - {name}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    files = module_files()
    known = set(files) | {"lakehouse._native"}
    return {name: imports_of(name, path, known) for name, path in files.items()}


def reached(graph: dict[str, set[str]], start: str) -> dict[str, str]:
    """Every module `start` imports, directly or not, with the module that imports it first."""
    seen: dict[str, str] = {}
    todo = [start]
    while todo:
        module = todo.pop()
        for target in graph.get(module, ()):
            if target not in seen and target != start:
                seen[target] = module
                todo.append(target)
    return seen


def chain(seen: dict[str, str], start: str, end: str) -> str:
    path = [end]
    while path[-1] != start:
        path.append(seen[path[-1]])
    return " -> ".join(reversed(path))


@pytest.mark.parametrize(("sources", "forbidden"), CONTRACTS, ids=["ground floor", "analytics below the CLI"])
def test_layers_import_only_downwards(graph, sources, forbidden):
    broken = []
    for source in (m for m in graph if m in sources or m.startswith(tuple(f"{s}." for s in sources))):
        seen = reached(graph, source)
        for target in seen:
            if target in forbidden or target.startswith(tuple(f"{f}." for f in forbidden)):
                broken.append(chain(seen, source, target))
    assert not broken, "\n".join(broken)


def test_the_graph_is_read(graph):
    assert "lakehouse.lake" in graph and "lakehouse.models.volatility" in graph and "lakehouse.sim.engine" in graph
    assert "lakehouse.lake" in graph["lakehouse.models.volatility"]


def test_from_lakehouse_import_lake_loads_no_model_and_no_extension():
    code = (
        "import sys\nfrom lakehouse import Lake\nLake\n"
        "print(sorted(m for m in sys.modules if m.startswith(('lakehouse.models', 'lakehouse.sim', "
        "'lakehouse._native', 'polars'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]", loaded
