"""The order make test hands its files to the workers, as docs/contributing.md says: the longest first
(tests/conftest.py)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import LONGEST_FIRST, REPO


def test_every_file_named_longest_exists():
    # A file renamed or removed would drop out of the list silently and run last.
    assert [name for name in LONGEST_FIRST if not (REPO / "tests" / name).is_file()] == []


def test_make_test_hands_the_files_out_in_the_order_collected():
    # Without --no-loadscope-reorder pytest-xdist hands out the files with the most tests first, and the
    # order conftest.py sets is lost.
    recipe = re.search(r"^test:.*\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(), re.M)
    assert recipe is not None
    assert "--dist loadfile --no-loadscope-reorder" in recipe.group(1)


def test_the_collected_files_start_with_the_longest(request):
    files = list(dict.fromkeys(Path(item.path).name for item in request.session.items))
    present = [name for name in LONGEST_FIRST if name in files]
    assert files[: len(present)] == present
