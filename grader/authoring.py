"""The authoring API of the hidden suites.

A suite is a plain pytest file in `grader/suites/`, one per lesson file. Its
module header is the exercise's manifest entry and its checks are test
functions marked with `@check`; everything the grader needs to know about a
check (name, points, hint, nudge, visibility) is literal data there, which the
parent process reads without importing anything (see `grader.catalog`):

    LESSON = "03_jit"
    TITLE = "jit and structured control flow"

    @check("piecewise compiles under jax.jit", points=2,
           hint="What does Python's `if` do with a value that is only known at run time?")
    def test_piecewise_jits(student):
        jit.assert_jittable(student.piecewise, (1.5,))

Help comes in levels (`grader.hints`, `grade hint`): the `hint` is a question shown
with every failure; `nudge` (optional) is a more direct pointer the student asks for
(without one, the failure's likely cause and line serve); the failure's `fix` comes
last, when the course allows it. A nudge points, it never gives the code:

    @check("running_sum uses lax.scan", points=2,
           hint="How does jax.lax.scan carry a value from one step to the next?",
           nudge="The carry is the running total; each step returns (new carry, output).")

Citing the spec. A check may ask only what the lesson's spec (`docs/lesson-spec.md`,
the student-facing contract) states, and `spec` quotes the words it enforces, verbatim
(line breaks aside; several excerpts joined by " ... "), from the lesson file's own
section or the spec's conventions. `grade verify` checks every quote against the
course's spec and `grade verify --list-checks` shows them to instructors:

    @check("running_sum uses lax.scan", points=2, hint="...",
           spec="the jaxpr of `running_sum` contains `scan`")

Fixtures a check can ask for (provided by `grader.plugin`):
- `student`: the student's lesson module, imported in the grading process.
- `seed`: the run's seed (`grade --seed`).
- `credit`: partial credit, `credit.award(k / n, "3 of 5 cases right: ...")`.
- `attach`: `attach.image(title, png_bytes)`, `attach.metric(name, value)`.
- `gate`: `gate.require("test_x_values")` inside one case of a check that judges
  several functions (see "Gates" below).

Gates. A property of a function (it compiles under `jit`, it is pure, it is traced
once, it uses `lax.scan`...) is worth points only when the function computes the right
values: a function returning a constant is pure and compiles. A check that does not
compare values itself names the value checks it stands on:

    @check("piecewise compiles under jax.jit", points=2, hint="...",
           requires=("test_piecewise_values",))

The plugin runs required checks first. When one of them did not pass with full marks,
the gated check is not run: it fails with "values are wrong: fix them first", records
`blocked_by` (the reports group it under that check), and counts as not attempted when
the required check was (an untouched stub stays "not attempted").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from grader.model import SourceLine

F = TypeVar("F", bound=Callable[..., Any])

MARKER = "grader_check"


def check(
    name: str,
    *,
    points: float,
    hint: str,
    nudge: str = "",
    spec: str = "",
    hidden: bool = False,
    requires: tuple[str, ...] = (),
) -> Callable[[F], F]:
    """Declare a test function as a graded check.

    All arguments must be literals: the grader reads them from the source. `nudge` is the
    second level of help (see above); `spec` quotes the sentence of the lesson's spec the
    check enforces (see "Citing the spec" above); `requires` names the value checks this
    check stands on (see "Gates" above).
    """

    def mark(fn: F) -> F:
        marked: F = pytest.mark.grader_check(
            name=name,
            points=points,
            hint=hint,
            nudge=nudge,
            spec=spec,
            hidden=hidden,
            requires=tuple(requires),
        )(fn)
        return marked

    return mark


class Credit:
    """Partial credit for one check: the fraction of its points earned, and (where every
    part that failed failed for one reason) that reason's key and line, so the reports show
    the cause once with every check it cost (`grader.reports.groups`)."""

    def __init__(self) -> None:
        self.fraction = 1.0
        self.message = ""
        self.fix = ""
        self.root_cause: str | None = None
        self.location: SourceLine | None = None

    def award(
        self,
        fraction: float,
        message: str,
        fix: str = "",
        *,
        root_cause: str | None = None,
        location: SourceLine | None = None,
    ) -> None:
        """Earn `fraction` of the points; `message` says what failed, `fix` (shown as the
        hint policy allows, like a failure's fix) how to mend it; `root_cause` and
        `location`: the student's exception every failed part raised, and its line."""
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"credit fraction must be in [0, 1], got {fraction}")
        self.fraction = float(fraction)
        self.message = message
        self.fix = fix
        self.root_cause = root_cause
        self.location = location


class Attachments:
    """Images and numbers a check adds to the report."""

    MAX_IMAGE_BYTES = 2_000_000
    PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

    SIGNATURES = (
        (PNG_MAGIC, "PNG"),
        (b"%PDF", "PDF"),
        (b"%!PS", "PostScript"),
        (b"\xff\xd8\xff", "JPEG"),
        (b"GIF8", "GIF"),
        (b"<?xml", "SVG"),
        (b"<svg", "SVG"),
    )
    """The first bytes of the formats matplotlib's `savefig` writes."""

    def __init__(self) -> None:
        self.images: list[tuple[str, bytes]] = []
        self.metrics: list[tuple[str, float]] = []

    @classmethod
    def format_of(cls, data: bytes) -> str:
        """The image format `data`'s first bytes are the signature of ("" for none)."""
        return next((name for magic, name in cls.SIGNATURES if data.startswith(magic)), "")

    def image(self, title: str, png: bytes) -> None:
        if not png.startswith(self.PNG_MAGIC):
            raise ValueError(f"attachment {title!r} is not a PNG image")
        if len(png) > self.MAX_IMAGE_BYTES:
            raise ValueError(f"attachment {title!r} is {len(png)} bytes, over the 2 MB cap")
        self.images.append((title, png))

    def metric(self, name: str, value: float) -> None:
        self.metrics.append((name, float(value)))
