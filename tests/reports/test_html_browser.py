"""The HTML report in a real headless Chromium: what students and instructors see.

`--dump-dom` shows the page after parsing (the score, the failure message, no
script element made from student text) and that its Content-Security-Policy
is in force (a script slipped into the page does not run); `--screenshot` shows
it rendered: not blank, and the embedded PNG decoded under that policy (its
unique fill colour is on screen).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from report_samples import MARKUP, PLOT_RGB, hostile_report

from grader.model import Report
from grader.reports import html

pytestmark = pytest.mark.browser

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WINDOW = (1100, 4000)


def _chromium() -> str | None:
    explicit = os.environ.get("GRADER_CHROMIUM")
    if explicit:
        return explicit
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    binary = _chromium()
    if binary is None:
        pytest.skip(
            f"no Chromium binary on PATH (looked for {', '.join(CANDIDATES)}; or set GRADER_CHROMIUM)"
        )
    profile = tmp_path_factory.mktemp("chromium-profile")
    return [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
    ]


@pytest.fixture(scope="module")
def page_url(report: Report, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = html.write(report, tmp_path_factory.mktemp("html") / "report.html")
    return path.as_uri()


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_dom_shows_score_and_failure(browser: list[str], page_url: str) -> None:
    dom = _run([*browser, "--dump-dom", page_url]).stdout
    assert '<div class="total" id="total-score">13.5<span class="of"> / 26</span></div>' in dom
    assert "the jaxpr of running_sum(xs)" in dom
    assert "How does jax.lax.scan carry a value from one step to the next?" in dom
    # The student's <script> stayed text: the parsed page has no script element.
    assert "<script" not in dom
    assert "&lt;script&gt;alert('pwned')&lt;/script&gt;" in dom
    assert '<img src="data:image/png;base64,' in dom


def test_hostile_text_stays_text(browser: list[str], tmp_path: Path) -> None:
    path = html.write(hostile_report(), tmp_path / "hostile.html")
    dom = _run([*browser, "--dump-dom", path.as_uri()]).stdout
    assert "<script" not in dom and '<img src="x"' not in dom
    assert '&lt;script&gt;alert(1)&lt;/script&gt; "&gt;&lt;img src=x onerror=alert(1)&gt;' in dom
    assert dom.count("<img ") == 1  # the plot, and no element made from the student's text
    assert MARKUP not in dom  # it is there as text: escaped in the serialised DOM


@pytest.mark.parametrize("with_policy", [True, False])
def test_the_policy_stops_a_script_that_slipped_in(
    browser: list[str], tmp_path: Path, with_policy: bool
) -> None:
    """Were escaping ever to fail, the page's own policy would still run nothing."""
    page = html.render(hostile_report())
    if not with_policy:  # the control: the same page without it does run the script
        page, removed = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>\n', "", page)
        assert removed == 1
    injected = (
        "<script>document.body.setAttribute('data-ran', 'script')</script>"
        "<img src=x onerror=\"document.body.setAttribute('data-ran', 'handler')\">"
    )
    path = tmp_path / "slipped.html"
    path.write_text(page.replace("<body>", "<body>" + injected, 1), encoding="utf-8")
    dom = _run([*browser, "--dump-dom", path.as_uri()]).stdout
    assert ("data-ran=" in dom) is not with_policy


def test_screenshot_is_not_blank_and_the_image_decoded(
    browser: list[str], page_url: str, tmp_path: Path
) -> None:
    from PIL import Image

    shot = tmp_path / "report.png"
    _run([*browser, f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--screenshot={shot}", page_url])
    image = Image.open(shot).convert("RGB")
    assert image.size == WINDOW
    colors = image.getcolors(maxcolors=1 << 20) or []
    assert len(colors) > 50, "the page rendered (nearly) blank"
    plot = sum(
        n for n, rgb in colors if all(abs(a - b) <= 8 for a, b in zip(rgb, PLOT_RGB, strict=True))
    )
    assert plot > 20_000, f"only {plot} pixels of the plot's fill colour: the PNG did not decode"
    keep = os.environ.get("GRADER_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)
