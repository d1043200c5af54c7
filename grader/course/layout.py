"""Where a course's files are: one place to look for every file a lesson is made of.

A course is a folder (`--course`, default the working folder) with

    solutions/<lesson>.py                   the reference, with its solution markers
    exercises/<lesson>.py                   the stub `grade assign` writes from it
    docs/lesson-spec.md                     the contract the checks cite (`spec=`)
    tests/fixtures/<lesson>/<variant>/<lesson>.py   fixture submissions
    tests/suites/test_suite_<lesson>.py     the test that grades the suite on them

and its suites in a folder of their own (`--suites`; in this repository
`grader/suites/test_<lesson>.py`, beside the public inputs in `grader/inputs/<lesson>.py`).
A course that keeps no tests of its suites (no `tests/suites/`) is not held to the
fixture rules (`grader.course.rules`): it grades with suites someone else tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SPEC = Path("docs") / "lesson-spec.md"
FIXTURES = Path("tests") / "fixtures"
SUITE_TESTS = Path("tests") / "suites"


@dataclass(frozen=True)
class LessonFiles:
    """Every file a lesson is made of, whether or not it exists (`missing`)."""

    lesson: str
    root: Path  # the course
    solution: Path  # solutions/<lesson>.py: the reference, graded in the tests as "solution"
    stub: Path  # exercises/<lesson>.py: the solution with its bodies removed (`grade assign`)
    suite: Path  # <suites>/test_<lesson>.py: the hidden checks
    inputs: Path  # <suites>/../inputs/<lesson>.py: public inputs the judge hands to student code
    fixtures: Path  # tests/fixtures/<lesson>/<variant>/<lesson>.py: alternatives, mistakes
    tests: Path  # tests/suites/test_suite_<lesson>.py: the suite graded on those variants

    def variants(self) -> list[str]:
        """The fixture folders' names (each a variant the suite tests may grade)."""
        if not self.fixtures.is_dir():
            return []
        return sorted(
            p.name for p in self.fixtures.iterdir() if (p / f"{self.lesson}.py").is_file()
        )

    def missing(self) -> list[str]:
        """What the lesson lacks, each named by its path (relative to the course when inside
        it). Public inputs are optional: only a suite that hands objects to student code
        (`client.Public(...)`) has them."""
        required = (self.solution, self.stub, self.suite, self.tests)
        absent = [self.shown(p) for p in required if not p.is_file()]
        if not self.variants():
            absent.append(f"{self.shown(self.fixtures)}/<variant>/{self.lesson}.py")
        return absent

    def shown(self, path: Path) -> str:
        """`path` relative to the course, when it is inside it."""
        for root in (self.root, self.root.resolve()):
            if path.is_relative_to(root):
                return str(path.relative_to(root))
        return str(path)


@dataclass(frozen=True)
class Course:
    """A course's folders (see the module's docstring)."""

    root: Path
    suites: Path
    solutions: Path
    exercises: Path
    spec: Path

    @classmethod
    def at(
        cls,
        root: Path,
        *,
        suites: Path | None = None,
        solutions: Path | None = None,
        exercises: Path | None = None,
        spec: Path | None = None,
    ) -> Course:
        """The course in `root`, with any part given elsewhere (`--suites DIR` and kin)."""
        return cls(
            root=root,
            suites=suites if suites is not None else root / "grader" / "suites",
            solutions=solutions if solutions is not None else root / "solutions",
            exercises=exercises if exercises is not None else root / "exercises",
            spec=spec if spec is not None else root / SPEC,
        )

    @property
    def inputs(self) -> Path:
        """The public inputs' folder: beside the suites (`grader/inputs/`)."""
        return self.suites.parent / "inputs"

    @property
    def suite_tests(self) -> Path:
        return self.root / SUITE_TESTS

    @property
    def keeps_tests(self) -> bool:
        """Whether the course tests its suites (has `tests/suites/`): only then is each lesson
        held to having fixtures and their test."""
        return self.suite_tests.is_dir()

    def lesson(self, lesson: str) -> LessonFiles:
        return LessonFiles(
            lesson=lesson,
            root=self.root,
            solution=self.solutions / f"{lesson}.py",
            stub=self.exercises / f"{lesson}.py",
            suite=self.suites / f"test_{lesson}.py",
            inputs=self.inputs / f"{lesson}.py",
            fixtures=self.root / FIXTURES / lesson,
            tests=self.suite_tests / f"test_suite_{lesson}.py",
        )

    def lessons(self) -> list[str]:
        """Every lesson: a reference solution in solutions/ is what makes one."""
        return sorted(p.stem for p in self.solutions.glob("*.py") if not p.name.startswith("_"))
