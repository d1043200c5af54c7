"""Write a GitHub Actions workflow that grades a pushed submission.

    grade ci-template [--out .github/workflows/grade.yml] [--fail-under 60] [--path exercises]
                      [--course PATH]

The workflow (from `templates/github-workflow.yml.j2`) installs the
repository (`pip install .`), runs `grade PATH --html ... --json ... --junit
... --fail-under PERCENT`, uploads the HTML report, the JSON and the JUnit XML
as the `grade-report` artifact (also when grading fails), puts the score in
the job summary, and fails the job when the score is below the threshold
(`grade` exits 1). `grade release` writes the same workflow into the student
repository. `--out` is relative to the working folder, and defaults to the
course's (`--course PATH`) `.github/workflows/grade.yml`; `--out -` prints it
instead.
"""

from __future__ import annotations

from grader.course import tree

DEFAULT_FAIL_UNDER = 60.0
DEFAULT_PYTHON = "3.11"
WORKFLOW = ".github/workflows/grade.yml"


def workflow(
    *,
    fail_under: float = DEFAULT_FAIL_UNDER,
    path: str = "exercises",
    python: str = DEFAULT_PYTHON,
    timeout_minutes: int = 60,
) -> str:
    """The workflow's text."""
    return tree.render(
        "github-workflow.yml.j2",
        fail_under_text=f"{fail_under:g}",
        path=path,
        python=python,
        timeout_minutes=timeout_minutes,
    )
