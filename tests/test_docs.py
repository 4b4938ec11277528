"""The project documents itself: every --help page and view comment makes sense without the team's
private notes, and every document they name exists in the repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from lakehouse.base.catalog import view_files
from lakehouse.cli import app

REPO = Path(__file__).resolve().parents[1]
#: Places that are not shipped with the project: a user cannot follow a reference to them.
UNSHIPPED = re.compile(r"DESIGN(\.md| section)|SEMANTICS\.md|\.\./shared|STYLE\.md")
DOCUMENT = re.compile(r"\bdocs/[\w./-]+\.md\b")


def command_paths(group: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix]
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        if hasattr(command, "commands"):  # a group (typer ships its own click)
            paths += command_paths(command, (*prefix, name))
        else:
            paths.append((*prefix, name))
    return paths


COMMANDS = command_paths(typer.main.get_group(app))


def test_every_command_is_walked():
    assert ("simulate",) in COMMANDS and ("campaign", "run") in COMMANDS and len(COMMANDS) > 20


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "lakehouse")
def test_help_pages_name_only_shipped_documents(path):
    page = CliRunner().invoke(app, [*path, "--help"], terminal_width=200)
    assert page.exit_code == 0, page.output
    assert not UNSHIPPED.search(page.output), UNSHIPPED.search(page.output)
    for document in DOCUMENT.findall(page.output):
        assert (REPO / document).exists(), f"`{' '.join(path)} --help` names {document}, which does not exist"


def test_view_comments_and_readme_name_only_shipped_documents():
    texts = {f"sql/{v.file_name}": v.description for v in view_files()}
    texts.update({str(p.relative_to(REPO)): p.read_text() for p in [REPO / "README.md", *REPO.glob("docs/*.md")]})
    for where, text in texts.items():
        assert not UNSHIPPED.search(text), f"{where}: {UNSHIPPED.search(text).group()}"
        for document in DOCUMENT.findall(text):
            assert (REPO / document).exists(), f"{where} names {document}, which does not exist"


def _build_site(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`make docs` on the docs of `root`."""
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def test_the_documentation_builds_as_a_site_without_a_warning(tmp_path):
    """`make docs`: every page in the navigation, every link between pages resolves (strict mode)."""
    run = _build_site(REPO, tmp_path / "site")
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "site" / "full-trace" / "index.html").exists()


def test_a_page_left_out_of_the_navigation_fails_the_build(tmp_path):
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    (tmp_path / "docs" / "stray.md").write_text("# A page nobody linked\n")
    run = _build_site(tmp_path, tmp_path / "site")
    assert run.returncode != 0 and "stray.md" in run.stderr


def test_the_readme_links_resolve():
    readme = (REPO / "README.md").read_text()
    for target in re.findall(r"\]\(((?!https?:)[^)#]+)", readme):
        assert (REPO / target).exists(), f"README links to {target}, which does not exist"


def test_the_readme_is_a_guide():
    assert len((REPO / "README.md").read_text().splitlines()) <= 350


def test_no_page_repeats_a_paragraph():
    """A page is written, not pasted: a botched edit once inserted one paragraph between every two
    characters of docs/hmm.md (19 MB), and nothing noticed."""
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        assert len(text) < 100_000, f"{page.name}: {len(text):,} characters"
        paragraphs = [p.strip() for p in text.split("\n\n") if len(p.strip()) > 200]
        repeated = {p[:80] for p in paragraphs if paragraphs.count(p) > 1}
        assert not repeated, f"{page.name} repeats: {repeated}"
