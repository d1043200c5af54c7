"""The HTML report in a real headless Chromium: what students and instructors see.

`--dump-dom` shows the page after parsing (the score, the failure message, no
script element made from student text); `--screenshot` shows it rendered: not
blank, and the embedded PNG decoded (its unique fill colour is on screen).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from report_samples import PLOT_RGB

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
