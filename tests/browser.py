"""A real headless browser for the tests of our HTML pages: Debian's Chromium (`make test` installs it
where it can); a test that needs it skips, saying why, where it is missing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from lakehouse.base.figures import pyplot


def chromium() -> list[str]:
    """The browser's command with the flags every test uses, or a skip."""
    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
    if browser is None:
        pytest.skip("no headless Chromium here (`make test` installs Debian's chromium where it runs as root)")
    return [browser, "--headless", "--disable-gpu", "--no-sandbox", "--virtual-time-budget=5000"]


def dump_dom(page: Path) -> subprocess.CompletedProcess[str]:
    """The DOM after the page loaded (stdout) and the browser's log, console messages included (stderr)."""
    return subprocess.run([*chromium(), "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def screenshot(page: Path, shot: Path, size: str = "1200,1200") -> Path:
    subprocess.run([*chromium(), f"--window-size={size}", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120, check=True)  # fmt: skip
    return shot


def not_blank(path: Path, share: float = 0.01) -> bool:
    """A picture with something drawn in it: at least `share` of its pixels differ from the background
    (the colour of its top-left corner)."""
    image = pyplot().imread(path)[..., :3]
    drawn = np.any(np.abs(image - image[0, 0]) > 0.05, axis=-1)
    return float(drawn.mean()) > share
