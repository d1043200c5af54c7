"""The HTML report in a real headless Chromium: what students and instructors see.

`--dump-dom` shows the page after parsing (the score, the failure message, no
script element made from student text) and that its Content-Security-Policy
is in force (a script slipped into the page does not run). A tab driven over
the DevTools protocol (real clicks, positions from the box model, screenshots)
shows the page leads with what to fix and its links jump there, that a passed
file is folded until its header is clicked and its embedded PNG then decodes
under that policy (its unique fill colour is on screen), and that the run
history's chart draws every run; and that the class summary's roster shows
every student's total at a laptop's width.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import io
import json
import os
import re
import select
import shutil
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from report_samples import MARKUP, PLOT_RGB, hostile_report

from grader.batch import gradebook
from grader.model import Report
from grader.reports import history, history_chart, html

pytestmark = pytest.mark.browser

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
VIEWPORT = (1100, 900)


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


def _high(fd: int) -> int:
    """`fd` moved to 10 or above: the browser's end must not be 3 or 4 before they are set."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class Tab:
    """One page of a headless Chromium driven over the DevTools protocol (`--remote-debugging-
    pipe`: JSON messages ending in NUL on file descriptors 3 and 4). The page runs no script of
    ours: clicks are real input events, positions come from the DOM's box model."""

    def __init__(self, argv: list[str], url: str, timeout: float = 60.0) -> None:
        to_browser, self._write = map(_high, os.pipe())
        self._read_fd, from_browser = map(_high, os.pipe())
        script = f'exec "$0" "$@" --remote-debugging-pipe 3<&{to_browser} 4>&{from_browser}'
        self.process = subprocess.Popen(
            ["bash", "-c", script, *argv, "about:blank"],
            pass_fds=(to_browser, from_browser),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._deadline = time.monotonic() + timeout
        self._buffer = b""
        self._next = 0
        self._events: list[dict[str, Any]] = []
        self._session: str | None = None
        try:
            self.document = self._open(url)
        except BaseException:
            self.close()
            raise

    def _open(self, url: str) -> int:
        page = next(t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page")
        attached = self.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)
        self._session = attached["sessionId"]
        self.send("Page.enable")
        self.send("Page.navigate", url=url)
        self.event("Page.loadEventFired")
        return int(self.send("DOM.getDocument")["root"]["nodeId"])

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params}
        if self._session:
            message["sessionId"] = self._session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive()
            if reply.get("id") == self._next:
                assert "error" not in reply, (method, reply["error"])
                return dict(reply["result"])
            self._events.append(reply)

    def event(self, method: str) -> dict[str, Any]:
        while True:
            for i, seen in enumerate(self._events):
                if seen.get("method") == method:
                    return self._events.pop(i)
            self._events.append(self._receive())

    def _receive(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = self._deadline - time.monotonic()
            ready, _, _ = select.select([self._read_fd], [], [], max(0.0, left))
            assert ready, "Chromium did not answer in time"
            chunk = os.read(self._read_fd, 1 << 16)
            assert chunk, "Chromium closed the DevTools pipe"
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return dict(json.loads(message))

    def node(self, selector: str) -> int:
        found = self.send("DOM.querySelector", nodeId=self.document, selector=selector)["nodeId"]
        assert found, f"no element matches {selector}"
        return int(found)

    def box(self, selector: str) -> tuple[float, float, float, float] | None:
        """left, top, right, bottom in the viewport (CSS px); None when it is not rendered."""
        try:
            quad = self.send("DOM.getBoxModel", nodeId=self.node(selector))["model"]["border"]
        except AssertionError as exc:
            if "Could not compute box model" in str(exc):
                return None
            raise
        return quad[0], quad[1], quad[4], quad[5]

    def height(self) -> float:
        """The viewport's height (the window's, less what the browser keeps for itself)."""
        return float(self.send("Page.getLayoutMetrics")["cssLayoutViewport"]["clientHeight"])

    def attributes(self, selector: str) -> set[str]:
        flat = self.send("DOM.getAttributes", nodeId=self.node(selector))["attributes"]
        return set(flat[::2])

    def click(self, selector: str) -> None:
        self.send("DOM.scrollIntoViewIfNeeded", nodeId=self.node(selector))
        box = self.box(selector)
        assert box is not None, selector
        x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def url(self) -> str:
        history = self.send("Page.getNavigationHistory")
        return str(history["entries"][history["currentIndex"]]["url"])

    def screenshot(self, clip: tuple[float, float, float, float] | None = None) -> Any:
        from PIL import Image

        params: dict[str, Any] = {"format": "png"}
        if clip is not None:  # a box in the viewport; the clip is in the page
            view = self.send("Page.getLayoutMetrics")["cssVisualViewport"]
            left, top, right, bottom = clip
            size = {"width": right - left, "height": bottom - top, "scale": 1}
            params["clip"] = {"x": left + view["pageX"], "y": top + view["pageY"], **size}
        data = base64.b64decode(self.send("Page.captureScreenshot", **params)["data"])
        return Image.open(io.BytesIO(data)).convert("RGB")

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._write)
        os.close(self._read_fd)


RUNS = 3  # in the history the tab's page is drawn with; 01_arrays has all its points in each


@pytest.fixture(scope="module")
def tab(browser: list[str], report: Report, tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("work")
    for seed in range(RUNS):
        history.record(replace(report, seed=seed), folder)
    path = html.write(report, folder / "report.html", history.load(folder))
    # Its own profile: the other tests start browsers while this one is open.
    argv = [a for a in browser if not a.startswith("--user-data-dir=")]
    argv += [f"--user-data-dir={tmp_path_factory.mktemp('tab-profile')}"]
    opened = Tab([*argv, f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}"], path.as_uri())
    yield opened
    opened.close()


def _pixels(image: Any, rgb: tuple[int, int, int]) -> int:
    colors = image.getcolors(maxcolors=1 << 20) or []
    return sum(n for n, c in colors if all(abs(a - b) <= 8 for a, b in zip(c, rgb, strict=True)))


def test_the_summary_is_on_the_first_screen_and_a_link_jumps(tab: Tab) -> None:
    first_screen = tab.screenshot()
    height = tab.height()
    assert first_screen.size == (VIEWPORT[0], height)
    colors = first_screen.getcolors(maxcolors=1 << 20) or []
    assert len(colors) > 50, "the page rendered (nearly) blank"
    keep = os.environ.get("GRADER_KEEP_SCREENSHOT")
    if keep:
        first_screen.save(keep)
    summary = tab.box("#to-fix")
    assert summary is not None and summary[3] < height, summary  # all of it, unscrolled
    first_file = tab.box("#ex-01_arrays")
    assert first_file is not None and summary[3] < first_file[1]
    target = "check-03_jit-test_newton_sqrt_traces_once"
    before = tab.box(f"#{target}")
    assert before is not None and before[1] > height  # below the first screen
    tab.click(f'#to-fix a[href="#{target}"]')
    after = tab.box(f"#{target}")
    assert after is not None and abs(after[1]) < 2, after  # scrolled to the top of the window
    assert tab.url().endswith(f"#{target}")


def test_a_passed_file_is_folded_until_clicked_and_its_plot_decodes(tab: Tab) -> None:
    """The plot of a passed file is hidden at first; a click on its header shows it, and the
    embedded PNG is decoded under the page's policy (its unique fill colour is on screen)."""
    fold, plot = "#ex-ex4_jit_speedup details", "#ex-ex4_jit_speedup img"
    assert "open" not in tab.attributes(fold) and "open" not in tab.attributes(
        "#ex-01_arrays details"
    )
    assert "open" in tab.attributes("#ex-03_jit details")
    tab.send("DOM.scrollIntoViewIfNeeded", nodeId=tab.node("#ex-ex4_jit_speedup"))
    assert _pixels(tab.screenshot(), PLOT_RGB) == 0  # folded: nothing of the plot on screen
    tab.click("#ex-ex4_jit_speedup summary")
    assert "open" in tab.attributes(fold)
    tab.send("DOM.scrollIntoViewIfNeeded", nodeId=tab.node(plot))
    box = tab.box(plot)
    assert box is not None
    shown = _pixels(tab.screenshot(box), PLOT_RGB)
    assert shown > 20_000, f"only {shown} pixels of the plot's fill colour: the PNG did not decode"
    assert "open" not in tab.attributes("#ex-01_arrays details")  # the others stay folded


def test_the_history_chart_draws_each_run(tab: Tab) -> None:
    tab.send("DOM.scrollIntoViewIfNeeded", nodeId=tab.node("svg.history"))
    chart = tab.box("svg.history")
    assert chart is not None
    shot = tab.screenshot(chart)
    full = _pixels(shot, (0x2D, 0xA4, 0x4E))  # "all points": 01_arrays and ex4 in every run
    cell = history_chart.CELL**2
    assert 2 * RUNS * cell * 0.9 <= full <= 2 * RUNS * cell, full


def test_folded_files_print_whole(tab: Tab) -> None:
    on_screen = tab.box("#ex-01_arrays")
    tab.send("Emulation.setEmulatedMedia", media="print")
    try:
        printed = tab.box("#ex-01_arrays")
    finally:
        tab.send("Emulation.setEmulatedMedia", media="")
    assert on_screen is not None and printed is not None
    assert printed[3] - printed[1] > on_screen[3] - on_screen[1] + 100  # its checks are there


LESSONS = (
    "01_arrays", "02_grad", "03_jit", "04_vmap", "05_pytrees", "06_random", "07_pmap", "08_mlp",
    "09_optax", "10_checkpoint", "11_frameworks", "ex1_dropout", "ex2_per_example_grads",
    "ex3_generic_mlp", "ex4_jit_speedup", "ex5_grad_clipping",
)  # fmt: skip  # the course's lesson files: 16 roster columns


def _class_of_the_course(report: Report) -> list[gradebook.Student]:
    """Six students over every lesson file of the course: a long folder name, a grader error
    with a long message, the sample's statuses rotated across the columns."""
    doc = report.to_json()
    samples = doc["exercises"]
    exercises = [
        {**samples[i % len(samples)], "name": name, "title": name} for i, name in enumerate(LESSONS)
    ]
    full = {**doc, "exercises": exercises}
    names = ["ann", "bo", "a-student-folder-named-after-the-whole-repository-url", "dee", "ed"]
    students = [gradebook.Student(n, full) for n in names]
    error = "the grader could not grade them: " + "OSError(28, 'No space left on device') " * 4
    return [*students, gradebook.Student("fay", None, error=error)]


def _roster_columns(tab: Tab) -> dict[str, int]:
    """The roster's columns by their header's text: its position (1-based, `nth-child`)."""
    header = tab.send("DOM.getOuterHTML", nodeId=tab.node("#roster thead tr"))["outerHTML"]
    texts = [re.sub(r"<[^>]+>", "", th).strip() for th in re.findall(r"<th\b.*?</th>", header)]
    return {text: i for i, text in enumerate(texts, 1)}


@pytest.mark.parametrize("width", [1024, 1280])
def test_the_class_summary_shows_every_total_at_a_laptops_width(
    browser: list[str], report: Report, tmp_path: Path, width: int
) -> None:
    """At 1024 and 1280 px, with the course's 16 lesson files, each student's total and
    percent are inside the box the roster scrolls in and inside the window, right of the
    names, and the page does not scroll sideways; scrolled to its last lesson column, the
    box keeps the names pinned at its left edge. Columns are found by their header."""
    students = _class_of_the_course(report)
    path = tmp_path / "summary.html"
    path.write_text(gradebook.summary_html(students), encoding="utf-8")
    argv = [a for a in browser if not a.startswith("--user-data-dir=")]
    argv += [f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={width},900"]
    tab = Tab(argv, path.as_uri())
    try:
        metrics = tab.send("Page.getLayoutMetrics")
        view = metrics["cssLayoutViewport"]["clientWidth"]
        assert view == width and metrics["cssContentSize"]["width"] <= view, metrics
        box = tab.box("#roster :has(> table)")  # the table's own box: where it scrolls
        assert box is not None and box[0] >= 0 and box[2] <= view, box
        column = _roster_columns(tab)
        for row in range(1, len(students) + 1):
            name = tab.box(f"#student-{row} > td:nth-child({column['student']})")
            assert name is not None
            for header in ("total", "%"):
                shown = tab.box(f"#student-{row} > td:nth-child({column[header]})")
                assert shown is not None and name[2] - 1 <= shown[0], (row, header, name, shown)
                assert shown[2] <= box[2] and shown[2] <= view, (row, header, shown, box)
        last = f"#student-1 > td:nth-child({column[LESSONS[-1]]})"
        before = tab.box(last)
        assert before is not None and before[2] > box[2]  # 16 lesson files overflow the box
        tab.send("DOM.scrollIntoViewIfNeeded", nodeId=tab.node(last))
        scrolled = tab.box(last)
        pinned = tab.box(f"#student-1 > td:nth-child({column['student']})")
        assert scrolled is not None and scrolled[2] <= box[2] + 1, (scrolled, box)
        assert pinned is not None and abs(pinned[0] - box[0]) <= 1, (pinned, box)
        assert tab.send("Page.getLayoutMetrics")["cssVisualViewport"]["pageX"] == 0
    finally:
        tab.close()
