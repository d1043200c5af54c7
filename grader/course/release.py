"""Write the student repository: what students clone, with nothing they must not see.

    grade release OUT [--course PATH] [--fail-under PERCENT] [--url URL]

OUT gets the course's stubs (exercises/), the installed grader's package with
the PUBLIC part of every suite (hidden checks, and the helpers only they used,
cut out; each suite records how many checks and points it lost as
`HIDDEN = {...}`) and its templates, a pyproject.toml (see
`grader.course.tree`), the lesson spec (`docs/lesson-spec.md` of the course, when it
has one: the contract students write against), a README for students, a .gitignore
(which keeps `.grade/hints.json`: the hints a student revealed go with their work, for
`grade batch`) and a GitHub Actions workflow that grades every push. The instructor's part of the grader
stays out: the commands only instructors run (all but `grade`, `watch`, `hint`
and `notebooks`), `grader/mutate/` (its `equivalent.toml` describes the
solutions) and the templates of what instructors write. No solutions/, no tests/, no hidden
check. Before finishing, the tree is searched for every hidden check's name,
id and hint (unless a public check has the same hint) and for every solution
body; any hit is an error and OUT is removed. (A hidden check's message is made
when it runs: what it is built from goes with the check's code.)

The release's workflow installs from `requirements.lock`, written beside it: the
course's own, or one made from the environment this command runs in (the
`frameworks` extra included; `grader.course.lock`).

`--url` is where the release will be served from, as pip installs it
(`git+https://github.com/COURSE/RELEASE`; default: the course's `[tool.grade]
release_url`). It is recorded in the release's pyproject.toml (`[tool.grade]
release_url`), so that `grade notebooks` there writes notebooks whose first cell
installs the grader from it on a hosted kernel (Colab): no package index serves it.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from grader import catalog, grading, settings
from grader.course import assign, ci_template, lock, public_suite, tree
from grader.errors import GraderError
from grader.reports import labels

# What students run: every other module of grader/commands/ is the instructor's.
STUDENT_COMMANDS = ("__init__.py", "shared.py", "watch.py", "hint.py", "notebooks.py")
STUDENT_TEMPLATES = ("notebook.html.j2", "report.html.j2")  # %grade's verdict, the report
INSTRUCTOR_PACKAGES = (
    "mutate",
    "course",
    "batch",
)  # mutate (its equivalent mutants), course, batch
MARKER_FILE = ".grade-release"  # lets --force replace an earlier release, and nothing else
SPEC = Path("docs") / "lesson-spec.md"  # the student-facing contract, shipped as it is
# `.grade/` keeps a student's grading state, for their machine alone, but for `hints.json`:
# the hints they revealed travel with their work (`grade batch` reads them, as self-reported).
GITIGNORE = (
    "__pycache__/\n*.pyc\n.venv/\n"
    "**/.grade/*\n!**/.grade/hints.json\n"
    f"{grading.DEFAULT_HTML}\nresults.json\njunit.xml\n"
)


URL_SCHEMES = ("git+https://", "git+ssh://", "https://", "http://", "file://")


class ReleaseError(GraderError):
    pass


def check_url(url: str) -> str:
    """`url` when pip can install the release from it; `ReleaseError` otherwise."""
    if url and (not url.startswith(URL_SCHEMES) or any(c.isspace() or c in "\"'\\" for c in url)):
        raise ReleaseError(
            f"--url {url!r}: give the URL pip installs the release from, starting with "
            f"{', '.join(URL_SCHEMES)}; e.g. git+https://github.com/COURSE/RELEASE"
        )
    return url


def record_url(pyproject: Path, url: str) -> None:
    """Add `release_url` to the `[tool.grade]` table that ends the release's pyproject."""
    text = pyproject.read_text(encoding="utf-8")
    if not text.split("\n[")[-1].startswith("tool.grade]"):
        raise ReleaseError(f"{pyproject} does not end with its [tool.grade] table")
    pyproject.write_text(text.rstrip("\n") + f'\n{settings.RELEASE_URL} = "{url}"\n')


def solution_bodies(solutions: Path) -> list[tuple[str, str]]:
    """(where, text) of every solution block of two or more lines: text no release may hold."""
    found = []
    for path in sorted(solutions.glob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for block in assign.blocks("\n".join(lines), str(path)):
            body = [
                s.strip()
                for s in lines[block.begin + 1 : block.end]
                if s.strip() and not s.strip().startswith(("#", assign.STUB))
            ]
            if len(body) >= 2:
                found.append((f"{path}:{block.begin + 1}", "\n".join(body)))
    return found


def hidden_hints(specs: Sequence[catalog.ExerciseSpec]) -> list[str]:
    """The hints of hidden checks that no public check shares: text no release may hold."""
    public = {c.hint for s in specs for c in s.checks if c.visibility == "public"}
    return sorted(
        {
            c.hint
            for s in specs
            for c in s.checks
            if c.visibility == "hidden" and c.hint not in public
        }
    )


def instructor_only() -> list[str]:
    """The grader's modules and packages (relative to the package) students do not get."""
    commands = sorted(p.name for p in (tree.PACKAGE / "commands").glob("*.py"))
    return [f"commands/{n}" for n in commands if n not in STUDENT_COMMANDS] + list(
        INSTRUCTOR_PACKAGES
    )


def equivalent_texts() -> list[str]:
    """Every id and reason of `grade mutate`'s equivalent mutants: text no release may hold."""
    from grader.mutate import equivalent

    listed = equivalent.load()
    return sorted({text for table in listed.values() for item in table.items() for text in item})


def leaks(
    out: Path,
    hidden: list[str],
    bodies: list[tuple[str, str]],
    hints: Sequence[str] = (),
    instructor_texts: Sequence[str] = (),
) -> list[str]:
    """Every file in `out` that holds a hidden check's name, id or hint, a marker, a solution
    body or a text of the instructor's (`instructor_texts`)."""
    problems = []
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        stripped = "\n".join(line.strip() for line in text.splitlines() if line.strip())
        rel = path.relative_to(out)
        problems += [f"{rel} mentions the hidden check {h!r}" for h in hidden if h in text]
        problems += [f"{rel} holds the hint of a hidden check: {h!r}" for h in hints if h in text]
        problems += [
            f"{rel} holds the instructor's text {t[:60]!r}" for t in instructor_texts if t in text
        ]
        problems += [
            f"{rel} holds the solution block of {where}"
            for where, body in bodies
            if body in stripped
        ]
        own_code = (
            rel.parts[0] == "grader" and rel.parts[1] != "suites"
        )  # assign.py names the marker
        if assign.BEGIN in text and not own_code:
            problems.append(f"{rel} holds a solution marker ({assign.BEGIN})")
    return problems


def _prepare(out: Path, force: bool) -> None:
    if out.exists() and any(out.iterdir()):
        if not (force and (out / MARKER_FILE).is_file()):
            raise ReleaseError(
                f"{out} is not empty. Give a new folder"
                + (
                    ", or --force to replace the earlier release there."
                    if (out / MARKER_FILE).is_file()
                    else " (--force only replaces a folder an earlier `grade release` wrote)."
                )
            )
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def release(
    out: Path,
    solutions: Path,
    exercises: Path,
    suites_dir: Path,
    fail_under: float,
    force: bool = False,
    *,
    course_dir: Path = Path("."),
    url: str | None = None,
) -> list[catalog.ExerciseSpec]:
    """Write the release (with the `[tool.grade]` setting of `course_dir`, and `url`, by
    default the course's `release_url`, recorded); returns the released (public) suites'
    specs. Raises one of `ERRORS` (nothing is left in `out`)."""
    url = check_url(settings.release_url(course_dir.resolve()) if url is None else url)
    unsynced = assign.differences(solutions, exercises)
    if unsynced:
        raise ReleaseError(
            "exercises/ is out of sync with solutions/; run `grade assign` first:\n"
            + "\n".join(unsynced)
        )
    full = catalog.exercises(suites_dir)  # the full suites must be well-formed
    pinned, _ = lock.for_course(course_dir, (ci_template.DEFAULT_EXTRAS,))
    cut = {
        path.name: public_suite.public_suite(path) for path in sorted(suites_dir.glob("test_*.py"))
    }
    sources = tree.suite_sources(suites_dir)  # shared helper modules (`_shared.py`) go as they are
    sources.update({name: suite.source for name, suite in cut.items()})
    _prepare(out, force)
    try:
        tree.copy_grader(
            out,
            sources,
            course=course_dir,
            leave_out=instructor_only(),
            templates=STUDENT_TEMPLATES,
        )
        if url:
            record_url(out / "pyproject.toml", url)
        released = _student_files(out, exercises, sorted(cut), fail_under, course_dir, pinned, url)
        hidden = [x for s in cut.values() for x in (*s.hidden_ids, *s.hidden_names)]
        problems = leaks(
            out, hidden, solution_bodies(solutions), hidden_hints(full), equivalent_texts()
        )
        if problems:
            raise ReleaseError(
                "the release would reveal what students must not see:\n  " + "\n  ".join(problems)
            )
        (out / MARKER_FILE).write_text(
            "written by `grade release`; `--force` may replace this folder\n"
        )
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    return released


def _student_files(
    out: Path,
    exercises: Path,
    suites: list[str],
    fail_under: float,
    course_dir: Path,
    pinned: lock.Read,
    url: str = "",
) -> list[catalog.ExerciseSpec]:
    """The stubs, the lesson spec, the README, the workflow, the lock it installs from and
    the .gitignore, written beside the grader in `out`; the released suites' specs
    (`suites`: their file names)."""
    shutil.copytree(exercises, out / "exercises", ignore=shutil.ignore_patterns(*tree.SKIPPED))
    spec = course_dir / SPEC
    if spec.is_file():
        (out / SPEC).parent.mkdir()
        shutil.copyfile(spec, out / SPEC)
    released = [catalog.read_suite(out / "grader" / "suites" / name) for name in suites]
    (out / "README.md").write_text(
        tree.render(
            "student-readme.md.j2",
            exercises=released,
            fail_under=fail_under,
            show_fixes=settings.show_fixes(course_dir),
            spec=(out / SPEC).is_file(),
            url=url,
        ),
        encoding="utf-8",
    )
    workflow = out / ".github" / "workflows" / "grade.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(
        ci_template.workflow(fail_under=fail_under, python=pinned.python), encoding="utf-8"
    )
    (out / lock.LOCK_FILE).write_text(pinned.text, encoding="utf-8")
    (out / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    return released


def summary(out: Path, released: Sequence[catalog.ExerciseSpec]) -> str:
    """What `grade release` says it wrote: the public checks, the hidden ones left out."""
    public_checks = sum(len(s.checks) for s in released)
    hidden_checks = sum(s.hidden_checks for s in released)
    hidden_points = labels.number(sum(s.hidden_points for s in released))
    return (
        f"wrote the student repository {out}: {len(released)} lesson file(s), {public_checks} "
        f"public check(s); {hidden_checks} hidden check(s) ({hidden_points} point(s)) left out"
    )


# What `release` raises: each message says what to fix.
ERRORS = (
    ReleaseError,
    public_suite.PublicSuiteError,
    assign.MarkerError,
    tree.TreeError,
    catalog.CatalogError,
    settings.SettingError,
    lock.LockError,
)
