"""Write a GitHub Actions workflow that grades a pushed submission.

    grade ci-template [--out FILE] [--fail-under PERCENT] [--path PATH] [--course PATH]
                      [--python VERSION] [--extras NAMES] [--wheelhouse DIR]

The workflow (from `templates/github-workflow.yml.j2`) installs the packages
pinned in the repository's `requirements.lock` without resolving any (`pip install
--no-deps -r requirements.lock`), then the repository's grader (`--no-deps`), then
runs `pip check`; it runs `grade PATH --html ... --json ... --junit
... --fail-under PERCENT`, uploads the HTML report, the JSON and the JUnit XML
as the `grade-report` artifact (also when grading fails), puts the score in
the job summary, and fails the job when the score is below the threshold
(`grade` exits 1). Its Python is the lock's (`--python` names another).

The lock is the repository's `requirements.lock` when there is one; else it is made
from the environment this command runs in (with `--extras`, and hashes from
`--wheelhouse`: `grader.course.lock`) and written beside `.github/`: commit both.
`grade release` writes the same workflow and lock into the student repository.
`--out` is relative to the working folder, and defaults to the course's (`--course
PATH`) `.github/workflows/grade.yml`; `--out -` prints the workflow only.
"""

from __future__ import annotations

from pathlib import Path

from grader import grading
from grader.course import lock, tree
from grader.errors import GraderError

DEFAULT_FAIL_UNDER = 60.0
DEFAULT_PYTHON = "3.11"
DEFAULT_EXTRAS = "frameworks"  # the student CI grades 11_frameworks too
DEFAULT_TIMEOUT_MINUTES = 60  # the job's time limit
WORKFLOW = ".github/workflows/grade.yml"


def repository_of(workflow: Path, course: Path) -> Path:
    """The repository a workflow file belongs to: the folder holding its `.github/workflows/`,
    else the course."""
    parents = workflow.parent.parts[-2:]
    return workflow.parent.parent.parent if parents == (".github", "workflows") else course


def workflow(
    *,
    fail_under: float = DEFAULT_FAIL_UNDER,
    path: str = grading.DEFAULT_LESSONS,
    python: str = DEFAULT_PYTHON,
    timeout_minutes: int = DEFAULT_TIMEOUT_MINUTES,
) -> str:
    """The workflow's text."""
    return tree.render(
        "github-workflow.yml.j2",
        fail_under_text=f"{fail_under:g}",
        path=path,
        python=python,
        timeout_minutes=timeout_minutes,
    )


class WorkflowExists(GraderError):
    """The workflow file is there already and `--force` was not given."""


def write(out: Path, text: str, repository: Path, pinned: lock.Read, *, force: bool,
          relock: bool) -> str:  # fmt: skip
    """Write the workflow `text` at `out` and, unless the repository has one (or `relock`),
    its requirements.lock; what was written about the lock, for the summary line."""
    if out.exists() and not force:
        raise WorkflowExists(f"{out} exists; pass --force to overwrite it")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    locked = repository / lock.LOCK_FILE
    if locked.is_file() and not relock:
        return ""
    locked.write_text(pinned.text, encoding="utf-8")
    return f"wrote {locked} ({len(pinned.pins)} packages pinned): commit it with the workflow"
