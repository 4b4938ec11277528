"""The docs' tables written from the engine's constants (lakehouse.sim.engine_docs)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lakehouse import _native
from lakehouse.sim import engine_docs

REPO = Path(__file__).resolve().parents[1]


def _page_copy(tmp_path: Path) -> Path:
    shutil.copy(REPO / "docs" / engine_docs.PRESETS_PAGE, tmp_path / engine_docs.PRESETS_PAGE)
    return tmp_path / engine_docs.PRESETS_PAGE


def test_a_preset_missing_from_the_page_is_found_then_written(tmp_path: Path) -> None:
    page = _page_copy(tmp_path)
    name = _native.POLICY_PRESETS[-1][0]
    page.write_text("\n".join(line for line in page.read_text().splitlines() if f"| `{name}` |" not in line) + "\n")
    assert engine_docs.main(["--check", str(tmp_path)]) == 1
    assert engine_docs.main([str(tmp_path)]) == 0
    assert engine_docs.main(["--check", str(tmp_path)]) == 0
    assert f"| `{name}` |" in page.read_text()
    assert page.read_text() == (REPO / "docs" / engine_docs.PRESETS_PAGE).read_text()  # the rest untouched


def test_each_row_is_the_engines_preset_without_its_name_in_the_source() -> None:
    rows = engine_docs.presets_table()[2:]
    assert len(rows) == len(_native.POLICY_PRESETS)
    for row, (name, formula, source) in zip(rows, _native.POLICY_PRESETS, strict=True):
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[:2] == [f"`{name}`", f"`{formula}`"]
        assert source.endswith(cells[2]) and not cells[2].startswith(name.upper())


def test_a_page_without_the_markers_is_refused_naming_them(tmp_path: Path) -> None:
    page = _page_copy(tmp_path)
    page.write_text(page.read_text().replace(engine_docs.TABLE_END, ""))
    with pytest.raises(SystemExit, match="markers around the written table"):
        engine_docs.main(["--check", str(tmp_path)])
