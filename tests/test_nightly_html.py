"""The nightly run's HTML report: self-contained, without JavaScript, and loaded in a real browser
with every image and no console error."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from lakehouse.base.lake import Lake
from lakehouse.data import sample_google_trace
from lakehouse.nightly.run import run

from browser import chromium, dump_dom, not_blank, screenshot
from nightly_inbox import DRAWN, FAST, put_broken, put_log

#: Put first in a copy of the page: it records every failed load and, once the page has loaded, what
#: became of each image, in an attribute the dumped DOM shows (the page itself has no script).
PROBE = """<script>
window.__failed = [];
window.addEventListener("error", e => window.__failed.push((e.target && e.target.src) || String(e.message)), true);
window.addEventListener("load", () => {
  const images = [...document.images];
  const broken = images.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src);
  document.body.setAttribute("data-probe", JSON.stringify({images: images.length, broken, failed: window.__failed}));
});
</script>"""


@pytest.fixture(scope="module")
def nights(tmp_path_factory) -> tuple[Path, Path]:
    """Two nights' pages: a log and the Google slice, then the log's next version and a corrupt file.
    Only the second, whose images the tests load, draws its figures (the first night's were half the
    fixture's time); of the first page the tests read the headline."""
    root = tmp_path_factory.mktemp("nightly-html")
    inbox = root / "inbox"
    inbox.mkdir()
    lake = Lake(root / "lake")
    put_log(inbox, "alpha", 200)
    shutil.copytree(sample_google_trace(), inbox / "trace")
    first = run(lake, inbox, FAST)
    put_log(inbox, "alpha", 400)
    put_broken(inbox)
    outcome = run(lake, inbox, DRAWN)
    assert outcome.record.status == "partial"
    return first.page, outcome.page


@pytest.fixture(scope="module")
def report(nights: tuple[Path, Path]) -> Path:
    return nights[1]


def test_the_page_is_self_contained_and_needs_no_javascript(report):
    text = report.read_text()
    assert "<script" not in text and "<style>" in text and "http" not in text.split("<body>")[1]
    sources = re.findall(r'<img src="([^"]+)"', text)
    assert len(sources) >= 4  # the replays' and the predictions' figures
    assert all((report.parent / src).is_file() and not src.startswith("/") for src in sources)
    # What arrived, what failed (with its reason), and the change since the log's previous version.
    assert "alpha" in text and "changed" in text and "broken.swf.gz" in text
    assert "change since the log" in text
    index = (report.parent.parent / "index.html").read_text()
    assert index.count("status-") >= 2 and f'href="{report.parent.name}/index.html"' in index


def test_the_page_loads_in_a_headless_browser_with_every_image(report, tmp_path):
    probe = report.with_name("probe.html")
    probe.write_text(report.read_text().replace("<head>", "<head>\n" + PROBE, 1))
    dom = dump_dom(probe)
    found = re.search(r'data-probe="([^"]*)"', dom.stdout)
    assert found, dom.stdout[-2000:]
    result = json.loads(html.unescape(found.group(1)))
    assert result["images"] >= 4 and result["broken"] == [] and result["failed"] == []
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line]
    assert not [line for line in console if "Uncaught" in line or "Failed to load" in line], console
    for page in (report, report.parent.parent / "index.html"):
        assert not_blank(screenshot(page, tmp_path / f"{page.parent.name}.png", "1200,1600"))


def test_the_blank_check_can_fail(tmp_path):
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    assert not not_blank(screenshot(blank, tmp_path / "blank.png", "800,600"))


FOLD = """<script>
window.addEventListener("load", () => {
  const box = document.querySelector(".headline").getBoundingClientRect();
  const text = document.querySelector(".headline").innerText;
  const changed = document.querySelector(".headline .box").innerText;
  document.body.setAttribute("data-fold", JSON.stringify({bottom: box.bottom, text, changed}));
});
</script>"""


def _fold(page: Path) -> dict:
    """Where the headline ends in a 1280 x 900 window, its text and that of its first box."""
    probe = page.with_name("fold.html")
    probe.write_text(page.read_text().replace("<head>", "<head>\n" + FOLD, 1))
    dom = subprocess.run([*chromium(), "--window-size=1280,900", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    found = re.search(r'data-fold="([^"]*)"', dom.stdout)
    assert found, dom.stdout[-2000:]
    return json.loads(html.unescape(found.group(1)))


def test_the_headline_is_above_the_fold_at_1280_by_900(report, tmp_path):
    """What changed, what got better or worse and what failed, read without scrolling; the details below."""
    fold = _fold(report)
    assert fold["bottom"] <= 900, fold
    text = fold["text"]
    # The log by name, with its numbers; the corrupt file is a failure, not a change.
    assert re.search(r"SWF log alpha changed: mean bounded slowdown EASY [\d.]+, EASY-SJBF [\d.]+, EASY\+\+ [\d.]+ "
                     r"on 400 jobs", fold["changed"]), fold["changed"]  # fmt: skip
    assert "broken" not in fold["changed"] and "new" not in fold["changed"]
    assert "alpha" in text and "mean bounded slowdown" in text and "instead of 200 (the log changed)" in text
    assert "Failures" in text and "broken.swf.gz" in text
    page = report.read_text()
    assert page.index('class="headline"') < page.index("<details")  # the details come after, folded


def test_a_new_log_is_named_in_the_headline_with_its_numbers(nights):
    changed = _fold(nights[0])["changed"]
    assert re.search(r"SWF log alpha new: mean bounded slowdown EASY [\d.]+, .* on 200 jobs", changed), changed
    assert "3 trace parts new" in changed
