"""Start a new exercise: every file a lesson is made of, in one command.

    grade new NAME [--title TEXT] [--course PATH] [--suites DIR] [--spec FILE]

writes, for a lesson file NAME.py (`grader.course.layout` says where):

    solutions/NAME.py                         the reference, with its solution markers
    exercises/NAME.py                         its stub, as `grade assign` writes it
    <suites>/test_NAME.py                     the suite: one check, citing the spec, with
                                              its hint, nudge and fix to write
    tests/fixtures/NAME/alternative/NAME.py   a correct solution in another style
    tests/fixtures/NAME/wrong_values/NAME.py  a wrong one
    tests/suites/test_suite_NAME.py           the test that grades the suite on them

and appends the lesson's section, `### NAME.py - TITLE`, to the lesson spec (after the last
lesson file's section), since the checks quote it (`spec=`). `<suites>` is `--suites DIR`,
by default the course's own `grader/suites/`: the suites are written where the course keeps
them, never into an installed grader.

The files hold a small working example (`squared_norm`) and `<FILL IN: ...>` wherever the
author has words to write; `grade verify`'s rule `placeholders` names each one left.
Nothing is written when any of the files exists already, or the spec has the section.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from grader import catalog
from grader import spec as lesson_spec
from grader.course import assign
from grader.course.layout import Course
from grader.course.rules import PLACEHOLDER
from grader.errors import GraderError

NAME = re.compile(r"^[a-z0-9][a-z0-9_]*$")
_FILE_HEADING = re.compile(r"^###\s+\S+\.py\b")  # a lesson file's section (grader.spec)
CORRECT, WRONG = "alternative", "wrong_values"


class NewError(GraderError):
    """The exercise cannot be started; the message says why and what to do."""


def fill(what: str) -> str:
    """A placeholder for the author: `<FILL IN: what>`."""
    return f"{PLACEHOLDER}: {what}>"


def solution(name: str, title: str) -> str:
    return f'''"""{name}: {title}.

{fill("what the student writes, in a sentence or two; the stub keeps this docstring")}
"""

import jax.numpy as jnp


def squared_norm(x):
    """Return the sum of the squares of the elements of `x`, as a scalar."""
    # TODO: square every element of `x` and add them up
    {assign.BEGIN}
    return jnp.sum(jnp.square(x))
    {assign.END}
'''


def suite(name: str, title: str) -> str:
    return f'''"""Hidden checks for {name}.py: {fill("what the suite judges, and how")}.

Started by `grade new {name}`; docs/authoring.md says how to add checks (jit, purity, ...)
and gate them on this value check.
"""

from typing import Any

import numpy as np
from hypothesis import strategies as st

from grader.authoring import check
from grader.checks import values
from grader.sandbox.client import Remote
from grader.suites._shared import FLOAT32, compiled

LESSON = "{name}"
TITLE = "{title}"

# The last level of help: shown only when the course shows fixes (docs/authoring.md).
_NORM_FIX = "{fill("the fix, e.g. `jnp.sum(jnp.square(x))`")}"


def _ref_squared_norm(x: Any) -> Any:
    """The reference, in another style than solutions/ (NumPy, float64)."""
    return np.float32(np.sum(np.asarray(x, np.float64) ** 2))


_VECTORS = st.lists(st.floats(-10, 10, width=32), min_size=1, max_size=8).map(
    lambda v: (np.asarray(v, np.float32),)
)


@check(
    "squared_norm returns the sum of squares",
    points=2,
    hint="{fill("a question that leads to the fix without giving it away")}",
    nudge="{fill("the second level of help, closer to the fix")}",
    spec="`squared_norm(x)` returns the sum of the squares of the elements of `x`",
)
def test_squared_norm_values(student: Remote) -> None:
    values.assert_matches_reference(
        compiled(student.squared_norm),
        _ref_squared_norm,
        _VECTORS,
        what="squared_norm(x)",
        max_examples=20,
        fix=_NORM_FIX,
        **FLOAT32,
    )
'''


def fixture(name: str, correct: bool) -> str:
    if correct:
        head = f"{name}, written in another style: correct, so the suite must pass it"
        body = "    x = jnp.ravel(jnp.asarray(x))\n    return jnp.dot(x, x)\n"
    else:
        head = f"{name} with a realistic mistake: the square of the sum, not the sum of squares"
        body = "    return jnp.sum(x) ** 2\n"
    return f'''"""{head}.

{fill("replace this example with a submission of the exercise's own")}
"""

import jax.numpy as jnp


def squared_norm(x):
{body}'''


def suite_test(name: str) -> str:
    return f'''"""The {name} suite graded on its solution, its stub and its fixtures
(tests/suites/harness.py). Each fixture folder is named by a test (`grade verify`'s rule
fixtures-graded); {fill("one fixture, and its test, per mistake a check targets")}.
"""

import pytest

pytestmark = pytest.mark.slow
LESSON = "{name}"


def test_solution_passes_every_check(graded):
    graded("solution").assert_full_marks()


def test_stub_fails_every_check_as_not_implemented(graded):
    graded("stub").assert_all_not_implemented()


def test_another_style_passes_every_check(graded):
    graded("{CORRECT}").assert_full_marks()


def test_the_square_of_the_sum_fails_the_value_check(graded):
    graded("{WRONG}").assert_fails("test_squared_norm_values", "squared_norm(x)", only=True)
'''


def spec_section(name: str, title: str) -> str:
    return f"""### {name}.py - {title}
- `squared_norm(x)` returns the sum of the squares of the elements of `x`, as a
  scalar.
Checks: {fill("what the checks judge, in the spec's words")}.
"""


def with_section(spec_text: str, section: str) -> str:
    """`spec_text` with `section` after the last lesson file's section (before the part that
    follows it, such as "## Data"), or at its end."""
    lines = spec_text.splitlines(keepends=True)
    last = max((i for i, line in enumerate(lines) if _FILE_HEADING.match(line)), default=None)
    at = len(lines)
    if last is not None:
        at = next((i for i in range(last + 1, len(lines)) if lines[i].startswith("## ")), at)
    before = "".join(lines[:at])
    if before and not before.endswith("\n"):
        before += "\n"
    if before and not before.endswith("\n\n"):
        before += "\n"
    after = "".join(lines[at:])
    return before + section + ("\n" + after if after else "")


@dataclass(frozen=True)
class Written:
    files: list[Path]  # every file written, the spec included
    spec: Path


def create(course: Course, name: str, title: str = "") -> Written:
    """Write the new exercise `name` into `course` (see the module's docstring). Raises
    NewError, having written nothing, when it cannot."""
    if not NAME.match(name):
        raise NewError(
            f"{name!r}: a lesson file's name is lower-case letters, digits and `_`, starting "
            "with a letter or digit (e.g. ex6_schedules)"
        )
    title = title or fill("the title students see in their reports")
    if '"' in title or "\\" in title or "\n" in title:
        raise NewError("--title: no quotes, backslashes or line breaks")
    if not course.solutions.is_dir():
        raise NewError(
            f"{course.solutions}: no such folder; is {course.root} the course? (--course PATH)"
        )
    if not course.suites.is_dir():
        raise NewError(
            f"{course.suites}: no such folder of suites; pass --suites DIR (the course's suites)"
        )
    if not course.spec.is_file():
        raise NewError(f"{course.spec}: no lesson spec to add the section to; pass --spec FILE")
    files = course.lesson(name)
    texts = {
        files.solution: solution(name, title),
        files.stub: assign.stub_source(solution(name, title), str(files.solution)),
        files.suite: suite(name, title),
        files.fixtures / CORRECT / f"{name}.py": fixture(name, correct=True),
        files.fixtures / WRONG / f"{name}.py": fixture(name, correct=False),
        files.tests: suite_test(name),
    }
    taken = [files.shown(p) for p in texts if p.exists() and files.fixtures not in p.parents]
    if files.fixtures.exists():
        taken.append(files.shown(files.fixtures))
    spec_text = course.spec.read_text(encoding="utf-8")
    if name in lesson_spec.parse(spec_text).sections:
        taken.append(f"{course.spec}: the section '### {name}.py'")
    try:
        others = catalog.by_name(course.suites)
    except catalog.CatalogError:
        others = {}
    if name in others and others[name].suite != files.suite.resolve():
        taken.append(f"{others[name].suite} (LESSON = {name!r})")
    if taken:
        raise NewError(f"{name} exists already; nothing written: {', '.join(sorted(taken))}")
    for path, text in texts.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    course.spec.write_text(with_section(spec_text, spec_section(name, title)), encoding="utf-8")
    catalog.exercises.cache_clear()  # a new suite in a folder read before
    return Written([*texts, course.spec], course.spec)


def summary(course: Course, name: str, written: Written) -> str:
    files = course.lesson(name)
    shown = "\n".join(f"  {files.shown(p)}" for p in written.files)
    return (
        f"Started {name}:\n{shown}\n"
        f"(the section '### {name}.py' was added to {files.shown(written.spec)})\n\n"
        f"Next: replace the example and every `{PLACEHOLDER}: ...>` (docs/authoring.md), then\n"
        f"  grade assign                       (exercises/{name}.py from the solution)\n"
        f"  grade verify --only {name}\n"
        f"  grade mutate --only {name}\n"
        f"  pytest {files.shown(files.tests)}\n"
    )
