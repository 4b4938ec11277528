"""The layers of the package, as import contracts: each layer imports only the ones below it, so the
lake's ground floor (`from lakehouse import Lake`) loads neither the compiled extension nor the models.

The contracts live in pyproject.toml ([tool.importlinter]) and import-linter checks them on the package's
layout (tests/package_tree.py), `make lint` likewise; the extension, which is no Python source, is
checked in a fresh interpreter (what `import` really loads).
"""

from __future__ import annotations

import os
import runpy
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from package_tree import REPO, build, links_of

from conftest import modules_loaded_by

LINT = "import sys, importlinter.cli as c; sys.exit(c.lint_imports(sys.argv[1], no_logo=True))"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tree")
    build(folder)
    return folder


def lint(tree: Path, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LINT, str(config)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
    )


def test_layers_import_only_downwards(tree):
    checked = lint(tree, REPO / "pyproject.toml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    contracts = len(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"])
    assert contracts >= 3 and f"{contracts} kept, 0 broken" in checked.stdout, checked.stdout
    assert {"layers", "acyclic_siblings"} <= {c["type"] for c in _contracts()}


def test_a_wrong_way_import_breaks_a_contract(tree, tmp_path):
    """The checker sees the graph: a contract the code does break (the studies read the lake) fails."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    wrong = {"id": "wrong", "name": "wrong", "type": "forbidden",
             "source_modules": ["lakehouse.campaigns.runner"],
             "forbidden_modules": ["lakehouse.base.lake"]}  # fmt: skip
    lines = ["[tool.importlinter]", 'root_package = "lakehouse"', "include_external_packages = true"]
    lines.append("exclude_type_checking_imports = true")
    for contract in [*config["contracts"], wrong]:
        lines.append("[[tool.importlinter.contracts]]")
        lines += [f"{key} = {_toml(value)}" for key, value in contract.items()]
    path = tmp_path / "contracts.toml"
    path.write_text("\n".join(lines) + "\n")
    checked = lint(tree, path)
    kept = len(config["contracts"])
    assert checked.returncode == 1 and f"{kept} kept, 1 broken" in checked.stdout, checked.stdout + checked.stderr
    assert "lakehouse.campaigns.runner is not allowed to import lakehouse.base.lake" in checked.stdout


def _contracts() -> list[dict]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


@pytest.mark.parametrize(
    ("module", "wrong", "broken"),
    [
        ("base/units.py", "import lakehouse.cli.simulate", "lakehouse.base is not allowed to import lakehouse.cli"),
        ("models/volatility/model.py", "import lakehouse.reports", "lakehouse.models is not allowed to import"),
        # one topic's folder reading another's (what both need lives beside them: models/job_bins.py)
        (
            "models/hmm/model.py",
            "import lakehouse.models.locality.model",
            "lakehouse.models.hmm is not allowed to import lakehouse.models.locality",
        ),
        # job_views reads the lake: the lake reading it would close a cycle inside the ground floor
        ("base/lake.py", "import lakehouse.base.job_views", "No cycles are allowed in lakehouse.base"),
    ],
)
def test_a_wrong_way_import_in_the_tree_breaks_the_layers(tmp_path, module, wrong, broken):
    """A copy of the package with one import the wrong way (up a layer, or around a cycle of the ground
    floor) fails the check, with the import named."""
    build(tmp_path)
    link = tmp_path / "lakehouse" / module
    if "/" in module:  # a subpackage is one link: copy it to change a file
        folder = tmp_path / "lakehouse" / module.split("/")[0]
        source = folder.resolve()
        folder.unlink()
        shutil.copytree(source, folder)
    text = link.read_text()
    link.unlink(missing_ok=True)
    link.write_text(
        text.replace("from __future__ import annotations\n", f"from __future__ import annotations\n{wrong}\n", 1)
    )
    checked = lint(tmp_path, REPO / "pyproject.toml")
    assert checked.returncode == 1 and broken in checked.stdout, checked.stdout + checked.stderr


def test_reading_a_nightly_config_or_exporting_a_log_loads_no_simulator():
    """...nor any model: the topics' folders (lakehouse.models.NAME) declare the stored tables the lake
    lists, and load no module of theirs."""
    statement = "import lakehouse.nightly.config, lakehouse.base.export"
    assert modules_loaded_by(statement, ("lakehouse.sim", "lakehouse.campaigns", "lakehouse.studies")) == []


def _toml(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return f'"{value}"'


def test_from_lakehouse_import_lake_loads_no_model_and_no_extension():
    layers = ("lakehouse.sim", "lakehouse.campaigns", "lakehouse.studies", "lakehouse.reports")
    assert modules_loaded_by("from lakehouse import Lake", (*layers, "lakehouse._native", "polars")) == []


def test_every_package_folder_is_one_a_wheel_holds(tree):
    """setup.py finds the packages a wheel installs (an editable install finds them anyway: a package
    left out works here and fails for everyone who installs a wheel): every package folder of the
    package's layout, and nothing else."""
    listed = set(runpy.run_path(str(REPO / "setup.py"), run_name="packages")["packages"]())
    found = {
        ".".join(Path(folder).relative_to(tree).parts)
        for folder, _, files in os.walk(tree / "lakehouse", followlinks=True)
        if "__init__.py" in files and "__pycache__" not in folder
    }
    assert found == listed, f"not listed: {sorted(found - listed)}; listed, not found: {sorted(listed - found)}"
    assert {"lakehouse.models.volatility", "lakehouse.sim", "lakehouse.sql"} <= listed


def test_a_new_topic_folder_is_held_to_the_topics_contract(tmp_path):
    """The `topics` contract names models/'s modules by a pattern: a topic folder added (with no entry
    anywhere else) that imports another topic breaks it."""
    folder = links_of(build(tmp_path) / "models")
    (folder / "toy").mkdir()
    (folder / "toy" / "__init__.py").write_text('"""A toy topic."""\n\nimport lakehouse.models.volatility.model\n')
    checked = lint(tmp_path, REPO / "pyproject.toml")
    broken = "lakehouse.models.toy is not allowed to import lakehouse.models.volatility"
    assert checked.returncode == 1 and broken in checked.stdout, checked.stdout + checked.stderr


#: What a test file may be named after besides a module, package or topic: the docs (the site's build
#: and links) and a docs page (its recipes).
NAMED_AFTER_DOCS = "docs"


def names_of_the_project() -> set[str]:
    """Every module, package and topic of the project (Python and Rust), and every docs page."""
    names = {NAMED_AFTER_DOCS}
    for folder in ("lakehouse", "models", "sql", "sim/python", "sim/campaigns", "sim/studies", "sim/src"):
        for path in (REPO / folder).rglob("*"):
            if "__pycache__" in path.parts:
                continue
            if path.is_dir():
                names.add(path.name)
            elif path.suffix in (".py", ".rs") and path.stem not in ("__init__", "mod", "lib"):
                names.add(path.stem)
    names |= set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"])
    names |= {name.rsplit(".", 1)[-1] for name in list(names) if "." in name}
    return names | {page.stem.replace("-", "_") for page in (REPO / "docs").glob("*.md")}


def named_after_the_project(test: str, names: set[str]) -> bool:
    """Whether test file `test` (its stem) is test_NAME[_ASPECT], NAME one of `names`."""
    words = test.removeprefix("test_").split("_")
    return any("_".join(words[:k]) in names for k in range(1, len(words) + 1))


def test_each_test_file_is_named_after_what_it_tests():
    """tests/test_NAME[_ASPECT].py, NAME a module, package or topic (or a docs page, for its recipes): a
    module's tests are found by its name, not by the session or the adversary that wrote them."""
    names = names_of_the_project()
    tests = sorted(test.stem for test in (REPO / "tests").glob("test_*.py"))
    assert len(tests) > 50 and [test for test in tests if not named_after_the_project(test, names)] == []
    assert not named_after_the_project("test_paper_cuts", names)  # (what the files were named after once)
    assert named_after_the_project("test_swf_bad_input", names) and named_after_the_project("test_sim_golden", names)
