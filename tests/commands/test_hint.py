"""`grade hint LESSON [CHECK]`: one more level of help per call, remembered, stopping at the last."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from grader import cli, state
from grader.course import penalised
from grader.model import CheckResult, ExerciseResult, Report, SourceLine

QUESTION = "How does jax.lax.scan carry a value from one step to the next?"
NUDGE = "The carry is the running total."
FIX = "jax.lax.scan(step, 0.0, xs)"

Hint = Callable[..., tuple[int, str]]


def _check(cid: str, status: str = "failed", **extra: object) -> CheckResult:
    fields: dict[str, object] = {
        "name": cid.removeprefix("test_").replace("_", " "),
        "id": cid,
        "status": status,
        "score": 1.0 if status == "passed" else 0.0,
        "max_score": 1.0,
        "visibility": "public",
        "message": "" if status == "passed" else f"{cid}\n  expected: 1\n  observed: 2",
        "hint": QUESTION,
    }
    return CheckResult(**{**fields, **extra})  # type: ignore[arg-type]


def _graded(folder: Path, *checks: CheckResult, status: str = "failed", message: str = "") -> None:
    exercise = ExerciseResult("03_jit", "jit", status, checks, message=message)  # type: ignore[arg-type]
    report = Report((exercise,), seed=0, submission="exercises", grader_version="0")
    state.remember(report, folder, "on-request")


@pytest.fixture
def hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Hint:
    monkeypatch.chdir(tmp_path)

    def run(*argv: str) -> tuple[int, str]:
        capsys.readouterr()
        code = cli.main(["hint", *argv, "--no-color"])
        out = capsys.readouterr()
        return code, out.out + out.err

    return run


def test_each_call_reveals_one_level_and_stops_at_the_last(tmp_path: Path, hint: Hint) -> None:
    where = SourceLine("03_jit.py", 14, "for x in xs:")
    _graded(
        tmp_path,
        _check("test_piecewise", "passed"),
        _check("test_running_sum_scan", nudge=NUDGE, fix=FIX, location=where),
        _check("test_newton", nudge="other nudge", fix="other fix"),
    )
    code, text = hint("03_jit")
    assert code == 0
    assert "03_jit > running sum scan (0/1)" in text
    assert "    in your code: 03_jit.py:14: for x in xs:" in text
    assert f"    question (1/3): {QUESTION}" in text and f"    nudge (2/3): {NUDGE}" in text
    assert FIX not in text and "again shows the fix" in text
    assert state.load_revealed(tmp_path) == {"03_jit": {"test_running_sum_scan": 1}}

    code, text = hint("exercises/03_jit.py")
    assert f"    fix (3/3): {FIX}" in text and "that is all the help" in text
    assert "No more help" not in text
    assert state.load_revealed(tmp_path) == {"03_jit": {"test_running_sum_scan": 2}}

    code, text = hint("03_jit", "test_running_sum_scan")  # by id: nothing more to reveal
    assert code == 0 and "No more help" in text and f"fix (3/3): {FIX}" in text
    assert state.load_revealed(tmp_path) == {"03_jit": {"test_running_sum_scan": 2}}

    code, text = hint("03_jit", "test_newton")  # another check, by id
    assert "nudge (2/3): other nudge" in text and "other fix" not in text
    assert state.load_revealed(tmp_path)["03_jit"]["test_newton"] == 1


def test_the_ladder_moves_on_to_the_next_failing_check(tmp_path: Path, hint: Hint) -> None:
    _graded(
        tmp_path,
        _check("test_running_sum_scan", nudge=NUDGE, fix=FIX),
        _check("test_newton", nudge="other nudge", fix="other fix"),
    )
    assert f"nudge (2/3): {NUDGE}" in hint("03_jit")[1]
    _, text = hint("03_jit")
    assert f"fix (3/3): {FIX}" in text
    assert "that is all the help for `running sum scan`. `grade hint 03_jit` again moves on to " \
        "`newton`." in text  # fmt: skip
    _, text = hint("03_jit")  # not "No more help": the next failing check's next level
    assert text.startswith("All the help for `running sum scan` is shown (`grade hint 03_jit "
                           "test_running_sum_scan` shows it again); the next failing check:")  # fmt: skip
    assert "03_jit > newton (0/1)" in text and "nudge (2/3): other nudge" in text
    assert FIX not in text
    hint("03_jit")
    _, text = hint()  # every level of every failing check shown: the first one, once more
    assert "03_jit > running sum scan" in text and "No more help" in text
    assert state.load_revealed(tmp_path) == {
        "03_jit": {"test_running_sum_scan": 2, "test_newton": 2}
    }


def test_a_course_without_fixes_stops_at_the_nudge(tmp_path: Path, hint: Hint) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.grade]\nshow_fixes = false\n")
    _graded(tmp_path, _check("test_running_sum_scan", nudge=NUDGE, fix=FIX))
    _, text = hint("03_jit", "running sum scan")  # by name
    assert NUDGE in text and "this course does not show fixes" in text
    _, text = hint("03_jit")
    assert FIX not in text and "No more help" in text
    assert state.load_revealed(tmp_path) == {"03_jit": {"test_running_sum_scan": 1}}


def test_without_a_nudge_the_line_comes_second(tmp_path: Path, hint: Hint) -> None:
    message = "running_sum(xs)\n  expected: a scan\n  observed: none\n  likely cause: a for loop"
    _graded(
        tmp_path,
        _check(
            "test_scan", message=message, fix=FIX, location=SourceLine("03_jit.py", 3, "for x:")
        ),
    )
    _, text = hint("03_jit")
    assert "nudge (2/3): Look at 03_jit.py line 3 (`for x:`): what does it do with" in text
    assert "a for loop" not in text.split("nudge (2/3)")[1]  # the cause is not repeated


def test_nothing_to_hint_and_usage_errors(tmp_path: Path, hint: Hint) -> None:
    code, text = hint("03_jit")
    assert code == 2 and "no grading of 03_jit in this folder yet" in text
    assert "grade --only 03_jit" in text
    _graded(tmp_path, _check("test_a", "passed"), status="passed")
    code, text = hint("03_jit")
    assert code == 0 and "Every check of 03_jit passed" in text
    code, text = hint("03_jit", "test_nope")
    assert code == 2 and "03_jit has no check 'test_nope'" in text
    _graded(
        tmp_path,
        _check("test_a", "error", message="not run: 03_jit.py does not import"),
        status="error",
        message="03_jit.py has a syntax error (03_jit.py, line 3)",
    )
    code, text = hint("03_jit")
    assert code == 0 and "did not run its checks" in text and "syntax error" in text
    assert not (tmp_path / ".grade" / "hints.json").exists()


def test_without_a_lesson_the_first_with_a_failing_check(tmp_path: Path, hint: Hint) -> None:
    code, text = hint()
    assert code == 2 and "no grading in this folder yet" in text
    passed = ExerciseResult("01_arrays", "arrays", "passed", (_check("test_a", "passed"),))
    stub = ExerciseResult("ex1_dropout", "dropout", "failed", (_check("test_d", nudge="dd"),))
    state.remember(Report((stub, passed), 0, ".", "0"), tmp_path, "on-request")
    _graded(tmp_path, _check("test_b", nudge="bb"))
    code, text = hint()
    assert code == 0 and "03_jit > b (0/1)" in text and "nudge (2/3): bb" in text


def test_a_check_is_named_by_a_part_of_its_id_or_words_of_its_name(
    tmp_path: Path, hint: Hint
) -> None:
    _graded(
        tmp_path,
        _check("test_running_sum_values", "passed"),
        _check("test_running_sum_scan", nudge=NUDGE, fix=FIX),
        _check("test_newton_steps", nudge="steps nudge"),
        _check("test_newton_jit", nudge="jit nudge"),
    )
    for wanted in ("test_scan", "running_sum_scan", "sum scan", "SCAN", "Running Sum Scan"):
        code, text = hint("03_jit", wanted)
        assert code == 0 and "03_jit > running sum scan" in text, wanted
    code, text = hint("03_jit", "newton st")  # words of the name, each a word's beginning
    assert code == 0 and "nudge (2/3): steps nudge" in text
    code, text = hint("03_jit", "running_sum")  # two checks, one failing: that one
    assert code == 0 and "03_jit > running sum scan" in text
    code, text = hint("03_jit", "newton")  # two failing checks: which?
    assert code == 2 and "'newton' could be any of 2 checks of 03_jit" in text
    assert "  test_newton_steps  (newton steps; failed)" in text
    assert "  test_newton_jit  (newton jit; failed)" in text
    code, text = hint("03_jit", "test_vmap")
    assert code == 2 and "03_jit has no check 'test_vmap'. Its failing checks:" in text
    assert "  test_running_sum_scan  (running sum scan; failed)" in text


def test_student_text_cannot_drive_the_terminal(tmp_path: Path, hint: Hint) -> None:
    _graded(tmp_path, _check("test_a", message="boom \x1b]0;title\x07 \x1b[31mred", nudge="n"))
    _, text = hint("03_jit")
    assert "\x1b" not in text and "␛]0;title␇" in text


SUITE = '''
"""A tiny suite: plain Python, so grading it takes a second."""
from grader.checks.failure import fail
from grader.authoring import check

LESSON = "01_sums"
TITLE = "sums"
TIMEOUT = 60


@check("add adds two numbers", points=2, hint="Which operator adds two numbers?",
       nudge="Look at the operator between a and b.")
def test_add(student):
    got = student.add(2, 3)
    if got != 5:
        raise fail("add(2, 3)", expected="5", observed=repr(got),
                   cause="the numbers are multiplied", fix="return a + b")


@check("total sums a list", points=1, hint="Which builtin adds up a list?",
       nudge="A list has a builtin that adds it up.")
def test_total(student):
    if student.total([1, 2]) != 3:
        raise fail("total([1, 2])", expected="3", observed="?")
'''


def _course(root: Path, add: str = "a * b") -> None:
    """A plain-Python course at `root`: its suite in suites/, a student's file in exercises/."""
    (root / "suites").mkdir(parents=True)
    (root / "suites" / "test_01_sums.py").write_text(textwrap.dedent(SUITE))
    (root / "exercises").mkdir()
    (root / "exercises" / "01_sums.py").write_text(
        f"def add(a, b):\n    return {add}\n\n\ndef total(xs):\n    return len(xs)\n"
    )


def _grade(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """`grade ARGV` in a process of its own, in `cwd`."""
    return subprocess.run(
        [sys.executable, "-m", "grader", *argv, "--no-color"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_a_real_grading_then_three_hints(tmp_path: Path) -> None:
    """`grade` (a real grading of a two-check plain-Python suite), then `grade hint` three
    times, each in a process of its own: the first shows the check's authored nudge, the
    second its fix, the third moves on to the next failing check; the next `grade` shows
    the fix revealed, and counts it."""
    _course(tmp_path)
    suites = str(tmp_path / "suites")
    graded = _grade(tmp_path, "--suites", suites, "--isolation", "basic", "--json", "r.json")
    assert graded.returncode == 0, graded.stderr[-3000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    add = doc["exercises"][0]["checks"][0]
    assert add["message"].endswith("likely cause: the numbers are multiplied"), add
    assert "return a + b" not in json.dumps(doc) and "return a + b" not in graded.stdout
    assert (add["nudge"], add["fix"], add["hints_revealed"]) == ("", "", 0)
    assert "Next: stuck on 01_sums? `grade hint 01_sums`" in graded.stdout

    def hint(*argv: str) -> str:
        proc = _grade(tmp_path, "hint", *argv)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout

    first = hint()
    assert "01_sums > add adds two numbers (0/2)" in first
    assert "nudge (2/3): Look at the operator between a and b." in first
    assert "return a + b" not in first
    assert "self-reported" in first and ".grade/hints.json" in first
    second = hint("01_sums")
    assert "fix (3/3): return a + b" in second
    assert "again moves on to `total sums a list`" in second
    third = hint("01_sums")
    assert "No more help" not in third
    assert "the next failing check:" in third and "01_sums > total sums a list" in third
    assert "nudge (2/3): A list has a builtin that adds it up." in third
    assert hint("01_sums", "test_add").count("fix (3/3): return a + b") == 1  # by id, again

    graded = _grade(tmp_path, "--suites", suites, "--isolation", "basic", "--json", "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    add, total = doc["exercises"][0]["checks"]
    assert (add["fix"], add["hints_revealed"], total["hints_revealed"]) == ("return a + b", 2, 1)
    assert doc["hints_revealed"] == 3
    assert "    fix: return a + b" in graded.stdout


@pytest.mark.slow
def test_state_is_kept_for_the_graded_folder(tmp_path: Path) -> None:
    """Grading a student's folder A from a course folder B writes A's `.grade/`, never B's;
    `grade hint` given A's lesson file reads A's."""
    course, alice = tmp_path / "course", tmp_path / "alice"
    _course(course, add="a + b")  # the course's own file passes `add`
    _course(alice)
    own = course / ".grade"
    own.mkdir()
    (own / "hints.json").write_text('{"01_sums": {"test_total": 1}}\n')
    (own / "last.json").write_text("{}\n")
    before = {p.name: p.read_bytes() for p in own.iterdir()}
    listing = sorted(p.name for p in course.iterdir())
    suites = str(course / "suites")
    graded = _grade(course, str(alice / "exercises"), "--suites", suites, "--isolation", "basic")
    assert graded.returncode == 0, graded.stderr[-3000:]
    assert {p.name: p.read_bytes() for p in own.iterdir()} == before  # B untouched
    new = sorted(set(p.name for p in course.iterdir()) - set(listing))
    assert new in ([], ["grade-report.html"]), new  # nothing else (no library's .hypothesis/)
    assert sorted(p.name for p in (alice / ".grade").iterdir()) == ["history.jsonl", "last.json"]
    assert not (alice / "exercises" / ".grade").exists()
    text = _grade(course, "hint", str(alice / "exercises" / "01_sums.py")).stdout
    assert "nudge (2/3): Look at the operator between a and b." in text
    assert state.load_revealed(alice) == {"01_sums": {"test_add": 1}}
    assert json.loads((own / "hints.json").read_text()) == {"01_sums": {"test_total": 1}}
    inside = _grade(alice / "exercises", "hint", "01_sums").stdout  # `grade` inside exercises/
    assert "fix (3/3): return a + b" in inside


BROKEN_PIECEWISE = {
    "python_if": "def piecewise(x):\n    if x > 0:\n        return x ** 2\n    return -x\n\n",
    "swapped": (
        "def piecewise(x):\n    return jax.lax.cond(x > 0, lambda v: -v, lambda v: v ** 2, x)\n\n"
    ),
    "where": "def piecewise(x):\n    return jnp.where(x > 0, x ** 2, -x)\n\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("broken", sorted(BROKEN_PIECEWISE))
def test_grade_hint_03_jit_never_recommends_jnp_where(tmp_path: Path, broken: str) -> None:
    """Issue 35: a broken `piecewise` (a Python `if`, the branches swapped, `jnp.where`);
    every level `grade hint 03_jit` reveals keeps to what the file asks (`jax.lax.cond`),
    never recommends `jnp.where`, which costs 2 of its points. Where the student used it,
    the grader may say so, never offer it."""
    root = Path(__file__).resolve().parents[2]
    source = (root / "solutions" / "03_jit.py").read_text()
    start = source.index("def piecewise(x):")
    end = source.index("\ndef ", start + 5)
    (tmp_path / "exercises").mkdir()
    (tmp_path / "exercises" / "03_jit.py").write_text(
        source[:start] + BROKEN_PIECEWISE[broken] + source[end:]
    )
    tmp_path.chmod(0o755)

    def run(*argv: str) -> str:
        proc = subprocess.run(
            [sys.executable, "-m", "grader", *argv, "--no-color"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return proc.stdout + proc.stderr

    shown = run("exercises/03_jit.py")
    assert "FAIL" in shown and "piecewise" in shown, shown
    revealed = [run("hint", "03_jit") for _ in range(3)]
    assert "nudge (2/3)" in revealed[0], revealed  # every level, to the last
    assert any("fix (3/3)" in t or "all the help" in t.lower() for t in revealed), revealed
    help_lines = [
        line
        for text in [shown, *revealed]
        for line in text.splitlines()
        if re.match(r"\s*(hint|question \(1/3\)|nudge \(2/3\)|fix \(3/3\)):", line)
    ]
    assert len(help_lines) >= 4, help_lines
    assert not [line for line in help_lines if penalised.recommends(line, "jnp.where")]
    if broken != "where":  # only the student's own jnp.where is ever named
        assert all("jnp.where" not in text for text in [shown, *revealed]), [shown, *revealed]
