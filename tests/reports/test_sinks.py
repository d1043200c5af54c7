"""Every sink of the output-safety layer (`grader.reports.controls`), fed hostile strings.

Each string goes in as a check's message and code line, as the student's output
and exercise message, as a figure's title and a metric's name, as the name of the
submission's folder and of a file in it (a `SourceLine.path`), and as a line of
`grade batch`'s progress (a student's folder name). No sink may hand one of
them on raw: not the terminal (report, progress lines, the live bar, `grade
watch`), the HTML report, our results JSON, Gradescope's JSON, JUnit XML or a
CSV cell.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_samples import plot_png
from rich.console import Console
from rich.text import Text

from grader import cli
from grader.model import Artifact, CheckResult, ExerciseResult, Report, SourceLine
from grader.reports import console, controls, gradescope, html, json_report, junit, terminal
from grader.watch import display

HOSTILE = [
    "\x1b[31mred\x1b[0m",  # colour
    "\x1b]0;pwned title\x07",  # OSC: retitle the terminal
    "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",  # OSC 8: a hidden hyperlink
    "\x1b[2J\x1b[H cleared",  # clear the screen, move the cursor
    "grade \rOVERWRITE",  # carriage return
    "back\x08\x08space",
    "bell\x07 nul\x00 del\x7f vt\x0b ff\x0c",
    "csi\x9b2J nel\x85 c1\x80",  # C1 controls
    "admin\u202egpj.exe",  # right-to-left override
    "\u2066isolate\u2069 \u202aembed\u202c \u202bx\u202d",
    "mark\u200e\u200f arabic\u061c",
    "zero\u200bwidth\u200cnon\u200djoiner",
    "word\u2060joiner bom\ufeff soft\xadhyphen",
    "tag\U000e0041\U000e007f",  # invisible copies of ASCII
    "line\u2028separator\u2029paragraph",
    '=HYPERLINK("https://evil.example","click")',
    "+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A2)",
    "\t=1+1",
    "\r=1+1",
]
ALL = "\n".join(HOSTILE)
OUR_COLOURS = re.compile(r"\x1b\[[0-9;]*m")  # the only escapes a report may hold: our own


def unsafe(text: str) -> list[str]:
    return controls.UNSAFE.findall(text)


def hostile_report(name: str) -> Report:
    where = SourceLine(path=f"{name}.py", line=3, code=name)
    failing = CheckResult(
        name="running_sum uses lax.scan",
        id="test_running_sum_scan",
        status="failed",
        score=0.0,
        max_score=2.0,
        visibility="public",
        message=name,
        hint="How does scan carry a value?",
        location=where,
    )
    erred = CheckResult(
        "piecewise", "test_piecewise", "error", 0.0, 1.0, "public", name, "", location=where
    )
    hidden = CheckResult("hidden", "test_hidden", "failed", 0.0, 1.0, "hidden", name, "")
    exercise = ExerciseResult(
        name="03_jit",
        title="jit",
        status="error",
        checks=(failing, erred, hidden),
        message=f"{name} could not be imported: {name}",
        output=name + "\n",
        artifacts=(Artifact(title=name, media_type="image/png", data=plot_png()),),
        metrics=((name, 1.0),),
    )
    return Report(
        exercises=(exercise,), seed=1, submission=f"submissions/{name}", grader_version="0"
    )


CASES = [pytest.param(text, id=f"hostile{i}") for i, text in enumerate(HOSTILE)] + [
    pytest.param(ALL, id="all")
]


def strings(doc: Any) -> Iterator[str]:
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for key, value in doc.items():
            yield key
            yield from strings(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from strings(value)


@pytest.mark.parametrize("text", CASES)
@pytest.mark.parametrize("color", [False, True])
def test_terminal_report_and_lines(text: str, color: bool) -> None:
    report = hostile_report(text)
    out = terminal.render(report, color=color)
    out += terminal.done_line(report.exercises[0], color=color)
    out += terminal.progress_line(1, 1, text)
    assert not unsafe(OUR_COLOURS.sub("", out))
    assert "\x1b" not in OUR_COLOURS.sub("", out)
    assert controls.visible(text.split("\n")[0]) in out  # shown, not dropped


def rendered(target: Console, *items: str | Text) -> str:
    with console.Progress(len(items), target, unit="student") as progress:
        for item in items:
            progress.start(str(item), 60.0)
            assert not unsafe(progress.running_text())
            progress.advance(item, str(item))
    buffer = target.file
    assert isinstance(buffer, io.StringIO)
    return buffer.getvalue()


@pytest.mark.parametrize("live", [False, True])
def test_progress_lines_and_the_live_bar(live: bool) -> None:
    """`grade batch` advances with `f"{student}: ..."`: a folder name the student chose."""
    target = Console(
        file=io.StringIO(),
        markup=False,
        highlight=False,
        force_terminal=live,
        color_system="standard" if live else None,
        width=100,
    )
    ours = Text.from_ansi(terminal.done_line(hostile_report(ALL).exercises[0], color=True))
    out = rendered(target, *(f"{name}: graded" for name in HOSTILE), ours)
    # A live terminal gets rich's own cursor and colour sequences; nothing of the student's.
    ours_only = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out) if live else out
    assert not unsafe(ours_only.replace("\r", ""))
    assert controls.visible(HOSTILE[0]) in out and controls.visible(HOSTILE[8]) in out


def test_grade_watch_screen() -> None:
    target = Console(file=io.StringIO(), force_terminal=True, color_system="standard", width=100)
    target.print(display.result(hostile_report(ALL).exercises[0]))
    buffer = target.file
    assert isinstance(buffer, io.StringIO)
    assert not unsafe(OUR_COLOURS.sub("", buffer.getvalue()))


@pytest.mark.parametrize("text", CASES)
def test_html_report(text: str) -> None:
    page = html.render(hostile_report(text))
    assert not unsafe(page)
    assert "<script>" not in page.split("</style>", 1)[1]


@pytest.mark.parametrize("text", CASES)
def test_results_json(text: str) -> None:
    raw = json_report.render(hostile_report(text))
    assert not unsafe(raw)  # as written (what `cat results.json` prints)
    doc = json.loads(raw)
    assert not [s for s in strings(doc) if unsafe(s)]  # as any tool reads it
    assert doc["submission"] == "submissions/" + controls.visible(text)


@pytest.mark.parametrize("text", CASES)
def test_gradescope_json(text: str) -> None:
    raw = gradescope.render(hostile_report(text))
    assert not unsafe(raw)
    assert not [s for s in strings(json.loads(raw)) if unsafe(s)]


@pytest.mark.parametrize("text", CASES)
def test_junit_xml(text: str) -> None:
    raw = junit.render(hostile_report(text))
    assert not unsafe(raw)
    root = ET.fromstring(raw.encode("utf-8"))
    for element in root.iter():
        for value in (element.text or "", element.tail or "", *element.attrib.values()):
            assert not unsafe(value), (element.tag, value)


FORMULA = re.compile(r"^[=+\-@\t\r]")


@pytest.mark.parametrize("text", CASES)
def test_csv_cell(text: str) -> None:
    cell = controls.csv_cell(text)
    assert not FORMULA.match(cell) and not unsafe(cell)
    buffer = io.StringIO()
    csv.writer(buffer).writerow(["student", cell, 3.5])
    row = next(csv.reader(io.StringIO(buffer.getvalue())))
    assert row[1] == cell and not FORMULA.match(row[1])


def test_csv_cell_keeps_plain_text_and_numbers() -> None:
    assert controls.csv_cell("alice") == "alice"
    assert controls.csv_cell("-1.5") == "-1.5" and controls.csv_cell("+2e3") == "+2e3"
    assert controls.csv_cell("-2+3") == "'-2+3" and controls.csv_cell("=1") == "'=1"
    assert controls.csv_cell("a=b") == "a=b"


def test_visible_is_idempotent_and_keeps_newline_tab_and_emoji() -> None:
    shown = controls.visible(ALL)
    assert controls.visible(shown) == shown
    assert controls.visible("a\tb\r\nc 😀 é ∑") == "a\tb\nc 😀 é ∑"
    assert controls.visible("zero\u200bwidth \U000e0041") == "zero\\u200bwidth \\U000e0041"


def test_grade_names_a_hostile_folder_visibly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`grade FOLDER` on a folder whose name a student chose, holding no lesson file."""
    folder = tmp_path / "\x1b]0;pwned\x07evil\u202egpj.\u200b"
    folder.mkdir()
    assert cli.main([str(folder), "--no-html", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "holds no lesson files" in err and not unsafe(err)
    assert "␛]0;pwned␇evil\\u202egpj.\\u200b" in err
