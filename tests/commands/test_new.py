"""`grade new NAME` and the rules `grade verify` checks: a new exercise is
one command, and every rule a lesson must follow is one list, the one docs/authoring.md
shows."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from grader import catalog
from grader.course import new, rules
from grader.course.assign import stub_source
from grader.course.layout import Course

Grade = Callable[..., tuple[int, str]]
ROOT = Path(__file__).resolve().parents[2]
COMMAND_FIXTURES = Path(__file__).parent / "fixtures"
SPEC = """# The contract

Conventions every file shares.

## Lesson concepts

### 01_sums.py - sums
- `add(a, b)` -> `a + b`.

## Data
Digits.
"""


def small_course(root: Path, *, keeps_tests: bool = True) -> Course:
    """The command tests' course (01_sums, 02_words), laid out as this repository is."""
    (root / "grader").mkdir(parents=True)
    shutil.copytree(COMMAND_FIXTURES / "suites", root / "grader" / "suites")
    for part in ("solutions", "exercises"):
        shutil.copytree(COMMAND_FIXTURES / part, root / part)
    (root / "docs").mkdir()
    shutil.copy(COMMAND_FIXTURES / "lesson-spec.md", root / "docs" / "lesson-spec.md")
    if keeps_tests:
        (root / "tests" / "suites").mkdir(parents=True)
    return Course.at(root)


def static(course: Course, *names: str) -> dict[str, list[str]]:
    """Rule name -> its violations, for the lessons `names` (as `grade verify --only`)."""
    specs = [s for s in catalog.exercises(course.suites) if s.name in names]
    evidence = rules.Evidence(course, specs, selected=True)
    return {r.name: found for r in rules.RULES if not r.graded if (found := r.find(evidence))}


# -- grade new -------------------------------------------------------------------------------


def test_new_writes_every_file_of_a_lesson_and_only_its_placeholders_are_left(
    tmp_path: Path,
) -> None:
    course = small_course(tmp_path)
    written = new.create(course, "ex6_tiny", "Exercise 6: tiny")
    files = course.lesson("ex6_tiny")
    assert files.missing() == [] and files.variants() == [new.CORRECT, new.WRONG]
    assert set(written.files) == {
        files.solution,
        files.stub,
        files.suite,
        files.tests,
        course.spec,
        *(files.fixtures / v / "ex6_tiny.py" for v in (new.CORRECT, new.WRONG)),
    }
    assert files.stub.read_text() == stub_source(files.solution.read_text())
    suite = catalog.read_suite(files.suite)
    (only,) = suite.checks
    assert (suite.name, suite.title, only.points) == ("ex6_tiny", "Exercise 6: tiny", 2.0)
    assert "### ex6_tiny.py - Exercise 6: tiny" in course.spec.read_text()
    # markers, sync, spec citation, fixtures and their test all hold: only what the author
    # has to write is left, each named with its file and line
    found = static(course, "ex6_tiny")
    assert set(found) == {"placeholders"}, found
    lines = found["placeholders"]
    assert any(p.startswith("solutions/ex6_tiny.py:3: still to fill in") for p in lines)
    assert any("test_ex6_tiny.py" in p and 'hint="<FILL IN' in p for p in lines)
    assert any("test_ex6_tiny.py" in p and 'nudge="<FILL IN' in p for p in lines)
    assert any("test_ex6_tiny.py" in p and "_NORM_FIX" in p for p in lines)
    assert any(p.startswith("tests/fixtures/ex6_tiny/wrong_values/") for p in lines)
    assert any("the section of ex6_tiny.py is still to fill in" in p for p in lines)
    # the other lessons' files and the spec's other sections are kept as they were
    assert set(static(course, "01_sums", "02_words")) == {"fixtures"}  # they have none
    assert course.spec.read_text().startswith(
        (COMMAND_FIXTURES / "lesson-spec.md").read_text().rstrip("\n")
    )


def test_what_grade_new_writes_passes_the_projects_lint(tmp_path: Path) -> None:
    """The suite, its test and the solution as ruff checks them in this repository (mypy
    strict on the suite was checked by hand: 1 min without its cache, too slow here)."""
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    course = small_course(tmp_path)
    new.create(course, "ex6_tiny", "Exercise 6: tiny")
    files = course.lesson("ex6_tiny")
    paths = [str(p) for p in (files.solution, files.suite, files.tests)]
    config = ("--config", str(ROOT / "pyproject.toml"), "--no-cache")
    for command in (["check", *config], ["format", "--check", *config]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *command, *paths], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_section_goes_after_the_last_lesson_files_section() -> None:
    section = new.spec_section("ex6_tiny", "six")
    placed = new.with_section(SPEC, section)
    assert (
        placed.index("### 01_sums.py") < placed.index("### ex6_tiny.py") < placed.index("## Data")
    )
    assert "`a + b`.\n\n### ex6_tiny.py - six\n" in placed
    assert placed.endswith("\n## Data\nDigits.\n")
    # a spec without lesson sections, or without a final line break: at its end
    assert new.with_section("# Contract", section) == "# Contract\n\n" + section


def test_nothing_is_written_when_the_exercise_or_its_parts_exist(
    tmp_path: Path, grade: Grade
) -> None:
    course = small_course(tmp_path)
    before = sorted(p for p in tmp_path.rglob("*"))
    spec = course.spec.read_text()
    with pytest.raises(new.NewError, match=r"01_sums exists already.*solutions/01_sums.py"):
        new.create(course, "01_sums")
    (course.root / "tests" / "fixtures" / "ex6_tiny").mkdir(parents=True)
    with pytest.raises(new.NewError, match=r"nothing written: tests/fixtures/ex6_tiny"):
        new.create(course, "ex6_tiny")
    (course.root / "tests" / "fixtures" / "ex6_tiny").rmdir()
    (course.root / "tests" / "fixtures").rmdir()
    course.spec.write_text(spec + "\n### ex6_tiny.py - written by hand\n")
    with pytest.raises(new.NewError, match=r"the section '### ex6_tiny.py'"):
        new.create(course, "ex6_tiny")
    course.spec.write_text(spec)
    for bad in ("Ex6", "ex6-tiny", "_ex6", "../ex6", ""):
        with pytest.raises(new.NewError, match="lower-case letters"):
            new.create(course, bad)
    with pytest.raises(new.NewError, match="no quotes"):
        new.create(course, "ex6_tiny", 'say "hi"')
    assert sorted(p for p in tmp_path.rglob("*")) == before
    assert course.spec.read_text() == spec
    # the command: exit 2 with the reason; a course without a spec or suites is refused
    code, out = grade("new", "01_sums", "--course", str(course.root))
    assert code == 2 and "01_sums exists already" in out
    code, out = grade("new", "ex6_tiny", "--course", str(tmp_path / "nowhere"))
    assert code == 2 and "no such folder" in out
    course.spec.unlink()
    code, out = grade("new", "ex6_tiny", "--course", str(course.root))
    assert code == 2 and "no lesson spec" in out and "--spec FILE" in out
    assert not (course.root / "solutions" / "ex6_tiny.py").exists()


# -- the rules, each both ways -----------------------------------------------------------------


def test_the_fixture_rules_hold_only_where_the_course_tests_its_suites(tmp_path: Path) -> None:
    course = small_course(tmp_path / "tested")
    found = static(course, "01_sums")
    assert found == {
        "fixtures": [
            "01_sums: no fixture submission (tests/fixtures/01_sums/<variant>/01_sums.py)",
            "01_sums: no test of its suite (tests/suites/test_suite_01_sums.py)",
        ]
    }
    fixture = course.root / "tests" / "fixtures" / "01_sums" / "forgot_zero" / "01_sums.py"
    fixture.parent.mkdir(parents=True)
    fixture.write_text("def add(a, b):\n    return a + b\n")
    test = course.root / "tests" / "suites" / "test_suite_01_sums.py"
    test.write_text('LESSON = "01_sums"\n\n\ndef test_solution(graded):\n    graded("solution")\n')
    assert static(course, "01_sums") == {
        "fixtures-graded": [
            "tests/fixtures/01_sums/forgot_zero: no test under tests/suites/ grades this "
            "fixture (name it: `graded('forgot_zero')` in tests/suites/test_suite_01_sums.py)"
        ]
    }
    # named by any test of the suites (the diagnoses' tests grade fixtures of every lesson)
    (course.root / "tests" / "suites" / "test_diagnoses.py").write_text(
        'VARIANTS = [("01_sums", "forgot_zero")]\n'
    )
    assert static(course, "01_sums") == {}
    # or by a table in docs/ that a test reads (docs/causes.md)
    (course.root / "tests" / "suites" / "test_diagnoses.py").unlink()
    assert "fixtures-graded" in static(course, "01_sums")
    (course.root / "docs" / "causes.md").write_text("| 01_sums | forgot_zero | test_total |\n")
    assert static(course, "01_sums") == {}
    # a course that keeps no tests of its suites grades with suites someone else tests
    assert static(small_course(tmp_path / "untested", keeps_tests=False), "01_sums") == {}


def test_placeholders_are_found_wherever_they_are_left(tmp_path: Path) -> None:
    course = small_course(tmp_path)
    assert "placeholders" not in static(course, "01_sums")
    solution = course.solutions / "01_sums.py"
    solution.write_text(solution.read_text().replace("a fixture lesson", new.fill("a title")))
    suite = course.suites / "test_01_sums.py"
    suite.write_text(suite.read_text().replace('"Python has an operator for it."', '"<FILL IN>"'))
    found = static(course, "01_sums")["placeholders"]
    assert found == [
        "solutions/01_sums.py:1: still to fill in: "
        '"""01 - sums: <FILL IN: a title> file for the command tests."""',
        "grader/suites/test_01_sums.py:27: still to fill in: "
        'nudge="<FILL IN>", spec="`add(a, b)` -> `a + b`")',
    ], found


def test_an_orphan_module_of_public_inputs_is_named(tmp_path: Path) -> None:
    course = small_course(tmp_path)
    inputs = course.inputs
    inputs.mkdir()
    (inputs / "__init__.py").write_text("")
    (inputs / "01_sums.py").write_text("")
    specs = list(catalog.exercises(course.suites))
    assert rules.BY_NAME["inputs"].find(rules.Evidence(course, specs)) == []
    (inputs / "00_renamed.py").write_text("")
    (problem,) = rules.BY_NAME["inputs"].find(rules.Evidence(course, specs))
    assert "00_renamed.py: public inputs named after no lesson" in problem
    # `--only` looks at the lessons it names, not at the course as a whole
    assert rules.BY_NAME["inputs"].find(rules.Evidence(course, specs, selected=True)) == []


def test_a_malformed_marker_is_named_once(tmp_path: Path) -> None:
    course = small_course(tmp_path, keeps_tests=False)
    solution = course.solutions / "01_sums.py"
    solution.write_text(solution.read_text().replace("    # TODO: add the two numbers\n", ""))
    specs = list(catalog.exercises(course.suites))
    found = rules.problems(rules.Evidence(course, specs), graded=False)
    assert found == [
        "[markers] the solution markers are malformed: "
        f"{solution}:6: put a `# TODO: <instruction>` comment right above ### BEGIN SOLUTION"
    ], found


# -- the docs ----------------------------------------------------------------------------------


def test_the_authoring_page_shows_the_rules_grade_verify_checks(grade: Grade) -> None:
    page = (ROOT / "docs" / "authoring.md").read_text()
    shown = re.search(r"<!-- rules: begin[^\n]*-->\n(.*?)<!-- rules: end -->", page, re.S)
    assert shown is not None, "docs/authoring.md lost its rules block"
    assert shown.group(1) == rules.markdown()  # regenerate it: rules.markdown()
    assert len(rules.RULES) == len(rules.BY_NAME) >= 16
    code, out = grade("verify", "--rules")
    assert code == 0 and out == rules.markdown()
    # what an author needs, on the one page
    for words in ("grade new", "nudge=", "spec=", "### BEGIN SOLUTION", "### STUB:",
                  "tests/fixtures/<lesson>/<variant>/<lesson>.py", "grade mutate --only",
                  "pip install -e '.[dev]'", "--suites PATH", "grade verify --only"):  # fmt: skip
        assert words in page, words


# -- end to end ----------------------------------------------------------------------------------

AUTHOR_SOLUTION = '''"""ex6_tiny: a linear warm-up of the learning rate."""

import jax.numpy as jnp


def warmup(step, peak, warmup_steps):
    """The learning rate at `step`: from 0 up to `peak` in `warmup_steps` steps, then `peak`."""
    # TODO: scale `peak` by the fraction of the warm-up done, at most 1
    ### BEGIN SOLUTION
    return peak * jnp.minimum(1.0, step / warmup_steps)
    ### END SOLUTION
'''
AUTHOR_SUITE = '''"""Hidden checks for ex6_tiny.py: the warm-up's values, against NumPy."""

import numpy as np

from grader.authoring import check
from grader.checks import values
from grader.sandbox.client import Remote
from grader.suites._shared import FLOAT32

LESSON = "ex6_tiny"
TITLE = "Exercise 6: a linear warm-up"
STEPS = np.arange(0, 12, dtype=np.float32)


@check(
    "warmup rises linearly to peak, then stays there",
    points=2,
    hint="What fraction of the warm-up is done at `step`, and what caps it?",
    nudge="Divide `step` by `warmup_steps`; past the warm-up the fraction stays 1.",
    spec="`warmup(step, peak, warmup_steps)` returns `peak * min(1, step / warmup_steps)`",
)
def test_warmup_values(student: Remote) -> None:
    values.assert_close(
        student.warmup(STEPS, np.float32(0.5), 4),
        np.float32(0.5) * np.minimum(1.0, STEPS / 4.0),
        what="warmup(step, 0.5, 4) for step 0..11",
        fix="`peak * jnp.minimum(1.0, step / warmup_steps)`",
        **FLOAT32,
    )
'''
AUTHOR_FIXTURE = '''"""ex6_tiny, {variant}."""

import jax.numpy as jnp


def warmup(step, peak, warmup_steps):
    return {body}
'''
AUTHOR_TEST = '''"""The ex6_tiny suite on its solution, its stub and its fixtures."""

import pytest

pytestmark = pytest.mark.slow
LESSON = "ex6_tiny"


def test_solution(graded):
    graded("solution").assert_full_marks()


def test_clipped(graded):
    graded("alternative").assert_full_marks()


def test_no_cap(graded):
    graded("wrong_values").assert_fails("test_warmup_values", "warmup", only=True)
'''


def _snapshot(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_an_exercise_added_with_grade_new_verifies_mutates_and_ships(
    tmp_path: Path, grade: Grade
) -> None:
    """A copy of the course (solutions, exercises, suites, the spec); `grade new`, then the
    author's own solution, suite, fixtures, test and spec section, written over what
    `grade new` wrote and nowhere else; then verify, mutate, release and bundle it."""
    root = tmp_path / "course"
    for part in ("solutions", "exercises", "grader/suites"):
        shutil.copytree(ROOT / part, root / part, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "docs").mkdir()
    shutil.copyfile(ROOT / "docs" / "lesson-spec.md", root / "docs" / "lesson-spec.md")
    (root / "tests" / "suites").mkdir(parents=True)
    for folder in (tmp_path, root):
        folder.chmod(0o755)  # the sandbox (another user at strict) reads the lesson files
    before = _snapshot(root)
    suites = ("--suites", str(root / "grader" / "suites"))

    code, out = grade("new", "ex6_tiny", "--title", "Exercise 6: a linear warm-up", cwd=root)
    assert code == 0, out
    listed = out.split("\n(")[0].splitlines()[1:]  # "Started ex6_tiny:", then the files
    written = {Path(line.strip()) for line in listed}
    assert len(written) == 7, out
    files = Course.at(root).lesson("ex6_tiny")
    files.solution.write_text(AUTHOR_SOLUTION)
    files.suite.write_text(AUTHOR_SUITE)
    files.tests.write_text(AUTHOR_TEST)
    for variant, body in {
        "alternative": "jnp.clip(step / warmup_steps, 0.0, 1.0) * peak",
        "wrong_values": "peak * step / warmup_steps",
    }.items():
        (files.fixtures / variant / "ex6_tiny.py").write_text(
            AUTHOR_FIXTURE.format(variant=variant, body=body)
        )
    spec = root / "docs" / "lesson-spec.md"
    text = spec.read_text()
    start = text.index("### ex6_tiny.py")
    spec.write_text(
        text[:start]
        + "### ex6_tiny.py - a linear warm-up\n"
        + "- `warmup(step, peak, warmup_steps)` returns `peak * min(1, step / warmup_steps)`.\n"
        + text[text.index("\n## ", start) :]
    )
    assert grade("assign", cwd=root)[0] == 0
    after = _snapshot(root)
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert changed == written, "edits outside the files grade new wrote"

    code, out = grade("verify", "--only", "ex6_tiny", "--runs", "1", "-q", *suites, cwd=root)
    assert code == 0, out
    assert "grade verify: OK. 1 lesson file(s), 1 check(s)" in out

    code, out = grade("mutate", "--only", "ex6_tiny", "--limit", "2", "-q", *suites, cwd=root)
    assert code == 0, out
    assert re.search(r"\| ex6_tiny \| 2 \| [12] \|", out), out

    code, out = grade("release", str(tmp_path / "release"), *suites, cwd=root)
    assert code == 0, out
    released = tmp_path / "release"
    assert (released / "exercises" / "ex6_tiny.py").read_text() == files.stub.read_text()
    assert "def test_warmup_values" in (released / "grader/suites/test_ex6_tiny.py").read_text()
    assert "### ex6_tiny.py - a linear warm-up" in (released / "docs/lesson-spec.md").read_text()

    bundle = tmp_path / "autograder.zip"
    code, out = grade("gradescope-bundle", str(bundle), "--only", "ex6_tiny", *suites, cwd=root)
    assert code == 0, out
    with zipfile.ZipFile(bundle) as zipped:
        assert "grader/suites/test_ex6_tiny.py" in zipped.namelist()

    # the verdict was earned: an author's suite that cites words the spec lacks is named
    files.suite.write_text(AUTHOR_SUITE.replace("`peak * min(1,", "`peak * max(1,"))
    catalog.exercises.cache_clear()  # read once per process; `grade` is a new process
    code, out = grade("verify", "--only", "ex6_tiny", "--runs", "1", "-q", *suites, cwd=root)
    assert code == 1 and "[spec] test_ex6_tiny.py" in out and "cites words not in" in out, out
