"""`grade release`: the student repository holds exercises and public checks, nothing hidden."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT

from grader import catalog
from grader.course import assign
from grader.course import release as release_command

Grade = Callable[..., tuple[int, str]]
HIDDEN_IDS = ("test_total_empty_secret", "test_shout_blank_secret")
HIDDEN_NAMES = ("total of the empty list is zero", "shout keeps an empty word empty but exclaimed")


def release(grade: Grade, course: Path, out: Path, *extra: str) -> tuple[int, str]:
    return grade(
        "release",
        str(out),
        "--solutions",
        str(course / "solutions"),
        "--exercises",
        str(course / "exercises"),
        "--suites",
        str(course / "suites"),
        *extra,
    )


def all_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_release_holds_exercises_public_suites_grader_and_readme(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    out = tmp_path / "student-repo"
    code, text = release(grade, course, out)
    assert code == 0, text
    assert "3 public check(s); 2 hidden check(s) (5 point(s)) left out" in text
    for rel in (
        "exercises/01_sums.py",
        "exercises/02_words.py",
        "grader/cli.py",
        "grader/suites/__init__.py",
        "grader/suites/test_01_sums.py",
        "grader/templates/report.html.j2",
        "pyproject.toml",
        "README.md",
        ".github/workflows/grade.yml",
        ".gitignore",
    ):
        assert (out / rel).is_file(), rel
    assert not (out / "solutions").exists() and not (out / "tests").exists()
    assert (out / "exercises" / "01_sums.py").read_text() == (
        course / "exercises" / "01_sums.py"
    ).read_text()

    released = catalog.exercises(out / "grader" / "suites")
    assert [(len(s.checks), s.hidden_checks, s.hidden_points) for s in released] == [
        (2, 1, 4.0),
        (1, 1, 1.0),
    ]
    readme = (out / "README.md").read_text()
    assert (
        "| `exercises/01_sums.py` | sums (command-test fixture) | 2 (5 pts) | 1 (4 pts) |" in readme
    )


def test_nothing_hidden_and_no_solution_body_is_released(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    out = tmp_path / "student-repo"
    assert release(grade, course, out)[0] == 0
    text = all_text(out)
    for secret in (
        *HIDDEN_IDS,
        *HIDDEN_NAMES,
        "_secret_fsum_reference",
        "distinctive-solution-body-marker",
        'EXCLAMATION = "!"',
        "return word.upper() + EXCLAMATION",
    ):
        assert secret not in text, secret
    for path in (out / "grader" / "suites").glob("*.py"):
        assert assign.BEGIN not in path.read_text()


def test_no_hidden_checks_name_id_message_or_hint_is_released(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    # Real messages: a submission that fails both hidden checks, graded with the full suites.
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    (wrong / "01_sums.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef total(xs):\n    return sum(xs) if xs else -1\n"
    )
    (wrong / "02_words.py").write_text(
        "def shout(word):\n    return word.upper() + '!' if word else '?'\n"
    )
    results = tmp_path / "results.json"
    code, text = grade(
        str(wrong),
        "--suites",
        str(course / "suites"),
        "--json",
        str(results),
        "--no-html",
        cwd=tmp_path,  # grading state (.grade/) goes to the working folder: this test's own
    )
    assert code == 0, text
    doc = json.loads(results.read_text())
    hidden = [c for e in doc["exercises"] for c in e["checks"] if c["visibility"] == "hidden"]
    assert [(c["id"], c["status"]) for c in hidden] == [(i, "failed") for i in HIDDEN_IDS]
    secrets = [s for c in hidden for s in (c["name"], c["id"], c["hint"], c["message"])]
    secrets += [
        line.strip() for c in hidden for line in c["message"].splitlines()[:1]
    ]  # what was checked
    assert "total([])" in secrets and "shout('')" in secrets

    out = tmp_path / "student-repo"
    assert release(grade, course, out)[0] == 0
    text = all_text(out)
    for secret in secrets:
        assert secret not in text, secret


def test_a_hidden_checks_hint_stops_the_release(course: Path, grade: Grade, tmp_path: Path) -> None:
    hint = "What is the upper case of ''?"  # the hidden shout check's hint, in no public check
    (course / "solutions" / "02_words.py").write_text(
        (course / "solutions" / "02_words.py").read_text() + f"# {hint}\n"
    )
    assert (
        grade(
            "assign", "--solutions", str(course / "solutions"), "--out", str(course / "exercises")
        )[0]
        == 0
    )
    out = tmp_path / "student-repo"
    code, text = release(grade, course, out)
    assert code == 2
    assert f"exercises/02_words.py holds the hint of a hidden check: {hint!r}" in text
    assert not out.exists()


def test_a_leak_stops_the_release_and_leaves_nothing(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    stub = course / "exercises" / "02_words.py"
    stub.write_text(
        stub.read_text() + "# hint: see 'shout keeps an empty word empty but exclaimed'\n"
    )
    out = tmp_path / "student-repo"
    code, text = grade(
        "release",
        str(out),
        "--solutions",
        str(course / "solutions"),
        "--exercises",
        str(course / "exercises"),
        "--suites",
        str(course / "suites"),
    )
    assert code == 2
    assert "out of sync" in text  # the hand edit is caught before anything is written
    assert not out.exists()

    (course / "solutions" / "02_words.py").write_text(
        (course / "solutions" / "02_words.py").read_text()
        + "# hint: see 'shout keeps an empty word empty but exclaimed'\n"
    )
    assert (
        grade(
            "assign", "--solutions", str(course / "solutions"), "--out", str(course / "exercises")
        )[0]
        == 0
    )
    code, text = release(grade, course, out)
    assert code == 2
    assert "exercises/02_words.py mentions the hidden check 'shout keeps an empty word" in text
    assert not out.exists()


def grader_imports(out: Path) -> list[tuple[str, str, list[str]]]:
    """(file, module, names) of every `import grader...` / `from grader... import` in out."""
    found = []
    for path in sorted((out / "grader").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            rel = str(path.relative_to(out))
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] == "grader":
                    found.append((rel, node.module, [a.name for a in node.names]))
            elif isinstance(node, ast.Import):
                found += [(rel, a.name, []) for a in node.names if a.name.split(".")[0] == "grader"]
    return found


def missing_imports(out: Path) -> list[str]:
    """The imports of the released grader that the release cannot satisfy."""
    problems = []
    for rel, module, names in grader_imports(out):
        place = out.joinpath(*module.split("."))
        if place.is_dir():
            init = (place / "__init__.py").read_text() if (place / "__init__.py").is_file() else ""
            problems += [
                f"{rel}: from {module} import {n}"
                for n in names
                if not (place / f"{n}.py").is_file() and not (place / n).is_dir() and n not in init
            ]
        elif not place.with_suffix(".py").is_file():
            problems.append(f"{rel}: {module}")
    return problems


def test_the_release_leaves_the_instructors_part_out(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    out = tmp_path / "student-repo"
    assert release(grade, course, out)[0] == 0
    commands = sorted(p.name for p in (out / "grader" / "commands").glob("*.py"))
    assert commands == ["__init__.py", "hint.py", "notebooks.py", "shared.py", "watch.py"]
    assert not (out / "grader" / "mutate").exists()
    templates = sorted(p.name for p in (out / "grader" / "templates").iterdir())
    assert templates == ["notebook.html.j2", "report.html.j2"]  # the report, %grade's verdict
    assert missing_imports(out) == []  # what students run imports nothing left out
    readme = (out / "README.md").read_text()
    for loop in ("grade watch", "grade hint 03_jit", "grade notebooks", "%grade", "Colab"):
        assert loop in readme, loop
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    for argv, code, said in (
        (["assign"], 2, "grade assign: error: an instructor's command, left out of this student"),
        (["--help"], 0, "Commands: hint, notebooks, watch."),
    ):
        proc = subprocess.run([sys.executable, "-m", "grader", *argv], cwd=out, env=env,
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert proc.returncode == code and said in proc.stdout + proc.stderr, proc.stderr


def test_the_lesson_spec_and_the_hints_record_go_with_the_release(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    """The course's docs/lesson-spec.md is shipped (no spec, none shipped nor linked); the
    .gitignore keeps `.grade/hints.json`, at the root or below, and nothing else of `.grade/`."""
    bare = tmp_path / "bare"
    assert release(grade, course, bare, "--course", str(course))[0] == 0
    assert not (bare / "docs").exists() and "lesson-spec" not in (bare / "README.md").read_text()

    (course / "docs").mkdir()
    (course / "docs" / "lesson-spec.md").write_text("# The contract\n\n`sums.total(xs)`\n")
    out = tmp_path / "student-repo"
    assert release(grade, course, out, "--course", str(course))[0] == 0
    assert (out / "docs" / "lesson-spec.md").read_text() == "# The contract\n\n`sums.total(xs)`\n"
    readme = (out / "README.md").read_text()
    assert "[`docs/lesson-spec.md`](docs/lesson-spec.md)" in readme
    assert "`.grade/hints.json`" in readme and "as your machine reports them" in readme

    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", str(out)], check=True, env=env)
    state = [".grade/hints.json", ".grade/last.json", ".grade/history.jsonl",
             "exercises/.grade/hints.json", "exercises/.grade/last.json", ".venv/x",
             "grade-report.html", "exercises/01_sums.py", "docs/lesson-spec.md"]  # fmt: skip
    for rel in state:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).touch()
    proc = subprocess.run(["git", "check-ignore", *state], cwd=out, env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert sorted(proc.stdout.split()) == sorted(
        [".grade/last.json", ".grade/history.jsonl", "exercises/.grade/last.json", ".venv/x",
         "grade-report.html"]
    )  # fmt: skip


def test_an_instructors_text_stops_the_release(
    course: Path, grade: Grade, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reason = "upper() of an empty word is the empty word"  # as equivalent.toml words them
    stub = course / "suites" / "test_02_words.py"
    stub.write_text(stub.read_text() + f"# {reason}\n")
    monkeypatch.setattr(release_command, "equivalent_texts", lambda: [reason])
    out = tmp_path / "student-repo"
    code, text = release(grade, course, out)
    assert (
        code == 2
        and f"grader/suites/test_02_words.py holds the instructor's text {reason!r}" in text
    )
    assert not out.exists()


def test_an_existing_folder_is_only_replaced_when_it_is_an_earlier_release(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    out = tmp_path / "student-repo"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, text = release(grade, course, out, "--force")
    assert code == 2 and "only replaces a folder an earlier `grade release` wrote" in text
    assert (out / "notes.txt").read_text() == "mine"

    fresh = tmp_path / "fresh"
    assert release(grade, course, fresh)[0] == 0
    code, text = release(grade, course, fresh)
    assert code == 2 and "--force" in text
    assert release(grade, course, fresh, "--force")[0] == 0


def test_the_real_course_releases_without_hidden_checks(grade: Grade, tmp_path: Path) -> None:
    if assign.differences(ROOT / "solutions", ROOT / "exercises"):
        pytest.skip("exercises/ is out of sync with solutions/ (test_assign reports it)")
    out = tmp_path / "student-repo"
    code, text = grade("release", str(out), cwd=ROOT)
    assert code == 0, text
    full = catalog.exercises(ROOT / "grader" / "suites")
    hidden = [c for s in full for c in s.checks if c.visibility == "hidden"]
    released = catalog.exercises(out / "grader" / "suites")
    assert sum(s.hidden_checks for s in released) == len(hidden)
    assert sum(s.hidden_points for s in released) == sum(c.points for c in hidden)
    text = all_text(out)
    public_hints = {c.hint for s in full for c in s.checks if c.visibility == "public"}
    for check in hidden:
        assert check.id not in text and check.name not in text, check.id
        assert check.hint in public_hints or check.hint not in text, check.id
    assert not (out / "solutions").exists()
    spec = (ROOT / "docs" / "lesson-spec.md").read_text()
    assert (out / "docs" / "lesson-spec.md").read_text() == spec  # the contract, as it is
    assert "[`docs/lesson-spec.md`](docs/lesson-spec.md)" in (out / "README.md").read_text()
    equivalent = release_command.equivalent_texts()
    assert len(equivalent) > 50  # every id and reason of grade mutate's equivalent.toml
    assert [t for t in equivalent if t in text] == []
    assert missing_imports(out) == []


@pytest.mark.slow
def test_students_see_the_hidden_count_when_grading_the_release(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    out = tmp_path / "student-repo"
    assert release(grade, course, out)[0] == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "exercises", "--no-html", "--no-color"],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Total 0/7 (0%)" in proc.stdout
    assert "public 0/3 passed; 2 hidden check(s), 5 point(s), run at grading" in proc.stdout


def setup_cell(notebook: Path) -> str:
    cells = json.loads(notebook.read_text())["cells"]
    return "".join(next(c["source"] for c in cells if c["cell_type"] == "code"))


def test_the_release_records_its_url_and_the_notebooks_install_from_it(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    url = "git+https://example.org/course/jax-release"
    out = tmp_path / "student-repo"
    code, text = release(grade, course, out, "--url", url, "--course", str(course))
    assert code == 0, text
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    assert (
        tomllib.loads((out / "pyproject.toml").read_text())["tool"]["grade"]["release_url"] == url
    )
    code, text = grade("notebooks", "--out", "nb", cwd=out)  # what a student runs there
    assert code == 0, text
    cell = setup_cell(out / "nb" / "01_sums.ipynb")
    assert f"%pip install --quiet 'jax-lesson-grader @ {url}'" in cell
    assert f"this repository's address, `{url}`" in (out / "README.md").read_text()
    # The course's own setting is the default; the instructor's notebooks read it too.
    (course / "pyproject.toml").write_text(f'[tool.grade]\nrelease_url = "{url}.git"\n')
    code, text = release(grade, course, tmp_path / "second", "--course", str(course))
    assert code == 0, text
    assert f'release_url = "{url}.git"' in (tmp_path / "second" / "pyproject.toml").read_text()
    assert grade("notebooks", "--out", "nb", cwd=course)[0] == 0
    assert f"jax-lesson-grader @ {url}.git" in setup_cell(course / "nb" / "01_sums.ipynb")


def test_without_a_url_the_notebooks_install_nothing_and_say_what_to_do(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    out = tmp_path / "student-repo"
    code, text = release(grade, course, out, "--course", str(course))
    assert code == 0, text
    assert "release_url" not in (out / "pyproject.toml").read_text()
    assert grade("notebooks", "--out", "nb", cwd=out)[0] == 0
    cell = setup_cell(out / "nb" / "01_sums.ipynb")
    assert "%pip" not in cell and "the grader is not installed in this kernel" in cell
    compile(cell.replace("%load_ext grader", "pass"), "setup", "exec")  # valid Python


@pytest.mark.parametrize("url", ["jax-lesson-grader", "github.com/course/release",
                                 'https://x.org/"; rm -rf ~'])  # fmt: skip
def test_a_url_pip_cannot_install_from_is_refused(
    url: str, course: Path, grade: Grade, tmp_path: Path
) -> None:
    out = tmp_path / "student-repo"
    code, text = release(grade, course, out, "--url", url, "--course", str(course))
    assert code == 2 and "give the URL pip installs the release from" in text
    assert not out.exists()


def test_the_releases_workflow_installs_from_the_courses_lock(
    course: Path, grade: Grade, tmp_path: Path
) -> None:
    from grader.course import lock

    out = tmp_path / "made"
    code, text = release(grade, course, out, "--course", str(course))
    assert code == 0, text
    assert lock.read(out / lock.LOCK_FILE).pins == lock.closure(("frameworks",))
    workflow = (out / ".github" / "workflows" / "grade.yml").read_text()
    assert "pip install --no-deps -r requirements.lock" in workflow
    assert f'python-version: "{lock.python_version()}"' in workflow
    committed = "# python: 3.12\njax==0.4.30\n"
    (course / lock.LOCK_FILE).write_text(committed)
    code, text = release(grade, course, tmp_path / "committed", "--course", str(course))
    assert code == 0, text
    assert (tmp_path / "committed" / lock.LOCK_FILE).read_text() == committed
    assert (
        'python-version: "3.12"'
        in (tmp_path / "committed" / ".github" / "workflows" / "grade.yml").read_text()
    )
