"""`%grade`'s parts without a kernel: which lesson, which cells, how the verdict is shown."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from grader.model import CheckResult, ExerciseResult, SourceLine
from grader.notebooks import from_lesson, inline, kernel, magic
from grader.notebooks.inline import Inline

LESSONS = ["01_arrays", "03_jit", "ex2_per_example_grads"]


@pytest.mark.parametrize(
    ("argument", "notebook", "lesson"),
    [
        ("03_jit", "", "03_jit"),
        ("notebooks/03_jit.ipynb", "", "03_jit"),
        ("", "/home/me/notebooks/03_jit.ipynb", "03_jit"),
        ("", "Copy of 03_jit (1).ipynb", "03_jit"),  # Colab's and Jupyter's copies
        ("03_jit", "01_arrays.ipynb", "03_jit"),  # the argument says what was meant
    ],
)
def test_the_lesson_comes_from_the_argument_or_the_notebooks_name(
    argument: str, notebook: str, lesson: str
) -> None:
    assert kernel.choose_lesson(argument, notebook, LESSONS) == lesson


def test_a_bare_grade_grades_the_lesson_graded_last() -> None:
    assert kernel.choose_lesson("", "", LESSONS, last="03_jit") == "03_jit"
    assert kernel.choose_lesson("", "01_arrays.ipynb", LESSONS, last="03_jit") == "01_arrays"


@pytest.mark.parametrize(
    ("argument", "notebook", "says"),
    [
        ("", "", "this kernel does not know its notebook's name"),
        ("", "Untitled.ipynb", "this notebook (Untitled.ipynb) is not named after a lesson"),
        ("03_jt", "", "no lesson is called '03_jt'. Did you mean `%grade 03_jit`?"),
    ],
)
def test_no_lesson_says_how_to_name_one(argument: str, notebook: str, says: str) -> None:
    with pytest.raises(kernel.NothingToGrade) as caught:
        kernel.choose_lesson(argument, notebook, LESSONS)
    assert says in str(caught.value) and "`%grade 03_jit`" in str(caught.value)


def test_the_notebooks_path_as_the_kernel_knows_it() -> None:
    assert kernel.notebook_path({"__vsc_ipynb_file__": "/w/03_jit.ipynb"}, {}) == "/w/03_jit.ipynb"
    assert kernel.notebook_path({"__session__": "03_jit.ipynb"}, {}) == "03_jit.ipynb"
    assert kernel.notebook_path({}, {"JPY_SESSION_NAME": "a/03_jit.ipynb"}) == "a/03_jit.ipynb"
    assert kernel.notebook_path({}, {}) == ""


def test_the_cells_the_kernel_ran_become_the_module_in_the_order_they_ran() -> None:
    raw = [
        "",
        "import jax.numpy as jnp",
        "def running_sum(xs):\n    return 1/0",  # 2: later redefined
        "running_sum(3)",  # 3: raised in the kernel
        "def running_sum(xs):\n    return xs.sum(), xs.cumsum()",
        "%load_ext grader\n%grade",
    ]
    built = kernel.from_history("03_jit", raw, {3}, {"running_sum", "piecewise"})
    assert built is not None
    namespace: dict[str, Any] = {"__file__": "/nowhere/03_jit.py"}
    exec(compile(built.text, "03_jit.py", "exec"), namespace)  # test-only: our own cells
    assert namespace["running_sum"](__import__("numpy").arange(3))[0] == 3  # the later one
    assert "running_sum(3)" not in built.text  # the cell that raised is left out
    assert "pass  # %grade" in built.text  # magics neutralised as `grade notebooks/` does
    assert built.notes.startswith("Notes on the cells this kernel ran:")
    assert "In [3] (`running_sum(3)`) raised" in built.notes
    assert "`piecewise`" in built.notes  # a function the suite needs, never defined
    assert "defined in cells" not in built.notes  # a cell run twice is no mistake here
    assert built.origin == "the 5 cell runs of this kernel (In [1] to In [5])"


@pytest.mark.parametrize("install", ["", "git+https://example.org/course.git"])
def test_the_setup_cell_the_kernel_ran_is_left_out(install: str) -> None:
    """Jupyter runs the setup cell (only `grade` skips its tag): it imports the grader,
    which the screen would blame on the student's module, with or without a release URL."""
    notebook = from_lesson.notebook_of('"""A lesson."""\nx = 1\n', "03_jit", install=install)
    setup = next("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    assert "import grader" in setup
    raw = ["", setup, "def running_sum(xs):\n    return xs.sum(), xs.cumsum()"]
    built = kernel.from_history("03_jit", raw, set(), {"running_sum"})
    assert built is not None
    assert "import grader" not in built.text
    assert "def running_sum" in built.text


def test_cells_that_define_nothing_are_nothing_to_grade(tmp_path: Path) -> None:
    assert kernel.from_history("03_jit", ["", "%load_ext grader", "1 + 1"], set(), set()) is None
    shell = SimpleNamespace(user_ns={}, history_manager=SimpleNamespace(input_hist_raw=["", "2"]))
    grading = magic.Grading(shell)
    try:
        view = grading.grade("03_jit")
    finally:
        grading.close()
    assert view.exercise is None
    assert "Nothing to grade for 03_jit" in view.message and "Run All" in view.message
    assert "Nothing to grade" in str(view) and "Nothing to grade" in view._repr_html_()


def test_a_bad_argument_is_said_not_raised() -> None:
    grading = magic.Grading(SimpleNamespace(user_ns={}))
    try:
        view = grading.grade("--seed x")
    finally:
        grading.close()
    assert "invalid int value" in view.message and magic.USAGE in view.message


def hostile() -> ExerciseResult:
    check = CheckResult(
        name="running sum scan",
        id="test_running_sum_scan",
        status="failed",
        score=0.0,
        max_score=2.0,
        visibility="public",
        message="<script>alert(1)</script>\x1b[2J expected a scan",
        hint="How does jax.lax.scan carry a value?",
        location=SourceLine("kernel, cell 4", 3, "for x in xs: <img src=x onerror=alert(1)>"),
    )
    passed = CheckResult("values", "test_values", "passed", 1.0, 1.0, "public", "", "")
    return ExerciseResult("03_jit", "jit", "failed", (check, passed))


def test_the_html_shows_the_problem_as_text_and_folds_what_passed() -> None:
    view = Inline(exercise=hostile(), next="fix it", footer="seed 0")
    page = view._repr_html_()
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;" in page and "\x1b" not in page and "␛" in page
    assert "How does jax.lax.scan carry a value?" in page
    assert "<details>" in page and "1 check passed" in page
    assert "Next: <span>fix it</span>" in page
    assert page.count("<style>") == 1 and ".grade-inline ." in page  # styles scoped
    code = Inline(message="then run `%grade <b>x</b>`")._repr_html_()
    assert "then run <code>%grade &lt;b&gt;x&lt;/b&gt;</code>" in code  # backticks: code


def test_the_plain_text_is_the_watch_screens() -> None:
    text = str(Inline(exercise=hostile(), next="fix it"))
    lines = text.splitlines()
    assert lines[0].startswith("FAIL") and "03_jit" in lines[0]
    assert "03_jit > running sum scan (0/2)" in text
    assert "hint: How does jax.lax.scan carry a value?" in text
    assert "\x1b" not in text and lines[-1] == "Next: fix it"


def test_at_most_the_first_problems_are_shown_in_full() -> None:
    base = hostile().checks[0]
    checks = tuple(
        CheckResult(f"check {i}", f"test_{i}", "failed", 0.0, 1.0, "public", f"m{i}", "q?")
        for i in range(5)
    )
    page = Inline(exercise=ExerciseResult("03_jit", "jit", "failed", (base, *checks)))
    html = page._repr_html_()
    assert html.count('class="gi-problem"') == inline.MAX_PROBLEMS
    assert "3 more problems" in html


def test_a_kernel_that_ran_nothing_grades_the_saved_notebook(tmp_path: Path) -> None:
    import nbformat

    saved = tmp_path / "03_jit.ipynb"
    cells = [
        nbformat.v4.new_code_cell("import jax.numpy as jnp"),
        nbformat.v4.new_code_cell("def running_sum(xs):\n    return xs.sum(), xs.cumsum()"),
        nbformat.v4.new_code_cell(
            "running_sum(None)  # a demo", metadata={"tags": ["skip-execution"]}
        ),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), saved)
    history = SimpleNamespace(input_hist_raw=["", "%load_ext grader", "%grade"])
    shell = SimpleNamespace(user_ns={"__session__": str(saved)}, history_manager=history)
    grading = magic.Grading(shell)
    try:
        built = grading.build(grading.specs["03_jit"])
    finally:
        grading.close()
    assert built.origin == "the 3 code cells saved in 03_jit.ipynb (the kernel ran none)"
    assert "def running_sum" in built.text and "a demo" not in built.text  # tagged: left out


def test_the_cells_the_kernel_ran_are_named_as_the_notebook_shows_them() -> None:
    check = CheckResult(
        "values",
        "test_values",
        "failed",
        0.0,
        1.0,
        "public",
        "raised IndexError\n  at kernel, cell 12, line 3: return y[0]",
        "q?",
        location=SourceLine("kernel, cell 12", 3, "return y[0]"),
    )
    check = dataclasses.replace(check, nudge="Look at kernel, cell 12 line 3")
    exercise = ExerciseResult("03_jit", "jit", "failed", (check,))
    said = kernel.in_kernel_words(exercise).checks[0]
    assert said.nudge == "Look at In [12] line 3"
    assert said.message.endswith("at In [12], line 3: return y[0]")
    assert said.location is not None and said.location.path == "In [12]"


def test_hint_reveals_the_next_level_and_remembers_it(tmp_path: Path) -> None:
    check = dataclasses.replace(hostile().checks[0], nudge="", fix="use lax.scan")
    result = ExerciseResult("03_jit", "jit", "failed", (check,))
    grading = magic.Grading(SimpleNamespace(user_ns={}))
    try:
        first = grading.reveal(result, tmp_path)
        second = grading.reveal(result, tmp_path)
        third = grading.reveal(result, tmp_path)
    finally:
        grading.close()
    # no authored nudge: the line to look at is the nudge (hints.fallback_nudge)
    assert first == "Revealed the nudge (2/3) of `running sum scan`."
    assert second == "Revealed the fix (3/3) of `running sum scan`."
    assert third == "All the help for `running sum scan` is shown above."
    assert (tmp_path / ".grade" / "hints.json").is_file()  # as `grade hint` remembers it


IF_AND_LOOP = (  # the cells of a 03_jit with a Python `if` and `for`: 12.33/21 as graded
    "import jax.numpy as jnp\nfrom jax import lax",
    "def piecewise(x):\n    if x > 0:\n        return x**2\n    return -x",
    "def running_sum(xs):\n    xs = jnp.asarray(xs)\n    total = jnp.zeros((), xs.dtype)\n"
    "    out = []\n    for i in range(xs.shape[0]):\n        total = total + xs[i]\n"
    "        out.append(total)\n    return total, jnp.stack(out)",
    "def newton_sqrt(a, n_iters=20):\n    a = jnp.asarray(a, jnp.float32)\n"
    "    return lax.fori_loop(0, n_iters, lambda i, x: 0.5 * (x + a / x), (a + 1.0) / 2.0)",
)


@pytest.mark.slow
def test_grade_hint_shows_the_points_as_the_course_counts_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`%grade --hint` shows what `%grade` shows, after the course's policy (here whole
    points), and the help it revealed; the cells graded as the kernel ran them."""
    import tempfile

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the magic's scratch folder
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "pyproject.toml").write_text("[tool.grade]\nround = 1\n")
    history = SimpleNamespace(input_hist_raw=["", *IF_AND_LOOP, "%load_ext grader"])
    grading = magic.Grading(SimpleNamespace(user_ns={}, history_manager=history))
    try:
        plain = grading.grade("03_jit")
        hinted = grading.grade("03_jit --hint")
    finally:
        grading.close()
    assert plain.exercise is not None and hinted.exercise is not None
    assert plain.exercise.score == hinted.exercise.score == 11  # 12.33 rounded down
    assert [c.score for c in hinted.exercise.checks] == [c.score for c in plain.exercise.checks]
    assert any("rounded down to 0" in c.message for c in hinted.exercise.checks)
    assert str(hinted).startswith("FAIL       11/21  03_jit")
    assert hinted.revealed.startswith("Revealed the ")
    revealed = json.loads((tmp_path / ".grade" / "hints.json").read_text())
    ((check_id, level),) = revealed["03_jit"].items()
    check = next(c for c in hinted.exercise.checks if c.id == check_id)
    assert level == 1 and check.nudge  # the nudge just revealed is shown
    assert not next(c for c in plain.exercise.checks if c.id == check_id).nudge
