"""The run history as a small chart: one row per lesson file, one column per run.

Each cell is coloured by the share of the file's points that run earned (all of them, half or
more, some, none); a file not graded in a run has no cell. Only the layout is computed here
(integer positions, colours, the text of each cell's tooltip); `report.html.j2` draws it as
inline SVG, so every name and time from the history file goes through autoescaping.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from grader.model import Report
from grader.reports import labels
from grader.reports.history import FileScore, Run

CELL = 14  # a cell's side, px
STEP = 16  # from one cell to the next
LABEL_WIDTH = 132  # the lesson file names on the left
LATEST_WIDTH = 64  # the latest score on the right
TOP = 6
AXIS = 22  # room for the run numbers under the grid
ROWS = 40  # at most this many lesson files are drawn
NAME_SHOWN = 17  # characters of a name shown before it is cut

# (colour, legend): all the points, half or more, some, none
SHADES = (
    ("#2da44e", "all points"),
    ("#d4a72c", "half or more"),
    ("#fb8f44", "some"),
    ("#cf222e", "none"),
)
EPSILON = 1e-9
NOTHING_TO_EARN = "#d1d9e0"  # a file with no points (skipped)


@dataclass(frozen=True)
class Cell:
    x: int
    y: int
    fill: str
    title: str


@dataclass(frozen=True)
class Column:
    number: int  # 1 = the oldest run shown
    x: int
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Row:
    name: str
    label: str  # the name, cut to fit
    y: int  # the baseline of its text
    latest: str  # its score in the last run ("7.5/10"), or "" when it was not graded then


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    rows: tuple[Row, ...]
    columns: tuple[Column, ...]
    axis_y: int
    latest_x: int
    legend: tuple[tuple[str, str], ...] = SHADES

    @property
    def runs(self) -> int:
        return len(self.columns)


def shade(score: FileScore) -> str:
    if score.max_score <= 0:
        return NOTHING_TO_EARN
    share = score.score / score.max_score
    if share >= 1 - EPSILON:
        return SHADES[0][0]
    if share >= 0.5 - EPSILON:
        return SHADES[1][0]
    return SHADES[2][0] if share > EPSILON else SHADES[3][0]


def when(time: str) -> str:
    """`2026-12-03 15:50 UTC` from the recorded `2026-12-03T15:50:12Z` (else as recorded)."""
    if len(time) == 20 and time[10] == "T" and time.endswith("Z"):
        return f"{time[:10]} {time[11:16]} UTC"
    return time


def _names(report: Report | None, runs: Sequence[Run]) -> list[str]:
    """The lesson files to draw: the report's, in its order, then any other from the history."""
    names = dict.fromkeys(e.name for e in report.exercises) if report else {}
    for run in runs:
        names.update(dict.fromkeys(f.name for f in run.files))
    return list(names)[:ROWS]


def _cut(name: str) -> str:
    return name if len(name) <= NAME_SHOWN else name[: NAME_SHOWN - 1] + "…"


def chart(runs: Sequence[Run], report: Report | None = None) -> Chart | None:
    """The chart of `runs` (oldest first), or None when there is nothing to draw."""
    names = _names(report, runs)
    if not runs or not names:
        return None
    row_of = {name: i for i, name in enumerate(names)}
    columns = []
    for number, run in enumerate(runs, start=1):
        x = LABEL_WIDTH + (number - 1) * STEP
        cells = tuple(
            Cell(
                x=x,
                y=TOP + row_of[f.name] * STEP,
                fill=shade(f),
                title=(
                    f"{f.name}, run {number} of {len(runs)} ({when(run.time)}, seed {run.seed}): "
                    f"{labels.points(f.score, f.max_score)}"
                ),
            )
            for f in run.files
            if f.name in row_of
        )
        columns.append(Column(number=number, x=x, cells=cells))
    last = {f.name: f for f in runs[-1].files}
    rows = tuple(
        Row(
            name=name,
            label=_cut(name),
            y=TOP + i * STEP + CELL - 3,
            latest=labels.points(last[name].score, last[name].max_score) if name in last else "",
        )
        for i, name in enumerate(names)
    )
    grid_right = LABEL_WIDTH + len(runs) * STEP
    axis_y = TOP + len(names) * STEP + 14
    return Chart(
        width=grid_right + 8 + LATEST_WIDTH,
        height=axis_y + AXIS - 14,
        rows=rows,
        columns=tuple(columns),
        axis_y=axis_y,
        latest_x=grid_right + 8,
    )
