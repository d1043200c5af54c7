"""`grade watch` keeps the verdicts of checks whose code did not change (`grader.runner.reuse`).

The fast tests hold the plan to what a check reached: a check of one function keeps its
verdict when another function changes, and is graded again when its function, a helper it
calls, what the module runs at import, or a gate it stands on changes; a failing check is
graded again when its lines move (its message quotes them), a passing one is not; a file
that reaches its names by strings keeps nothing. The slow test grades a real lesson file
through the warm worker, save after save, and compares every verdict with a full grading
of the same file: the same checks, statuses, scores and messages.
"""

from __future__ import annotations

import shutil
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from grader import catalog
from grader.catalog import CheckSpec, ExerciseSpec
from grader.model import ExerciseResult
from grader.protocol import records as rec
from grader.protocol.worker_messages import Ended
from grader.runner import engine, policy, results, reuse
from grader.runner.submission import Submission
from grader.watch.regrader import Job, Regrader

ROOT = Path(__file__).resolve().parents[2]

SOURCE = textwrap.dedent(
    '''
    """A lesson file."""
    import jax.numpy as jnp

    SCALE = 2.0


    def helper(x):
        return x * SCALE


    def first(x):
        return helper(x) + 1


    def second(x):
        return jnp.sum(x)
    '''
)


def _spec(tmp_path: Path, *ids: str) -> ExerciseSpec:
    suite = tmp_path / "test_lesson.py"
    suite.write_text("# the suite\n")
    checks = tuple(CheckSpec(i, i, 1.0, "", "visible", 1) for i in ids)
    return ExerciseSpec("lesson", "a lesson", suite, checks)


def _line(record: rec.Record) -> str:
    return rec.encode(record).decode().rstrip("\n")


def _grading(
    checks: dict[str, tuple[tuple[str, ...], str]], gates: dict[str, tuple[str, ...]] | None = None
) -> tuple[str, ...]:
    """The record lines of a complete grading: each check's reached names and status."""
    lines = [_line(rec.Collected(tuple(checks))), _line(rec.Import("lesson", ok=True))]
    for check_id, (names, status) in checks.items():
        lines += [
            _line(rec.Start(check_id)),
            _line(rec.Uses(check_id, names, (gates or {}).get(check_id, ()))),
            _line(
                rec.Result(
                    check_id,
                    "passed" if status == "passed" else "failed",
                    1.0 if status == "passed" else 0.0,
                    message="" if status == "passed" else f"{check_id} is wrong",
                )
            ),
        ]
    return (*lines, _line(rec.Done()))


def _plan(
    tmp_path: Path,
    before: str,
    after: str,
    checks: dict[str, tuple[tuple[str, ...], str]],
    gates: dict[str, tuple[str, ...]] | None = None,
) -> reuse.Plan | None:
    spec = _spec(tmp_path, *checks)
    files: dict[str, Path] = {}
    old = reuse.read_context(spec, before.encode(), files)
    earlier = reuse.Graded(before.encode(), old, _grading(checks, gates))
    now = reuse.read_context(spec, after.encode(), files)
    return reuse.plan(spec, earlier, after.encode(), now)


PASSING = {"test_first": (("first",), "passed"), "test_second": (("second",), "passed")}


def test_another_function_changed_keeps_the_check(tmp_path: Path) -> None:
    after = SOURCE.replace("jnp.sum(x)", "jnp.sum(x * x)")
    plan = _plan(tmp_path, SOURCE, after, PASSING)
    assert plan is not None
    assert plan.rerun.ids == ("test_second",)
    assert plan.rerun.passed == ("test_first",)
    assert [rec.decode(line) for line in plan.kept][1] == rec.Uses("test_first", ("first",))


@pytest.mark.parametrize(
    "edit",
    [
        ("helper(x) + 1", "helper(x) + 2"),  # its own function
        ("return x * SCALE", "return x / SCALE"),  # a helper it calls
        ("SCALE = 2.0", "SCALE = 3.0"),  # what the module runs at import
        ("import jax.numpy as jnp", "import numpy as jnp"),
    ],
)
def test_what_the_check_reaches_changed_grades_it_again(
    tmp_path: Path, edit: tuple[str, str]
) -> None:
    plan = _plan(tmp_path, SOURCE, SOURCE.replace(*edit), PASSING)
    assert plan is not None
    assert "test_first" in plan.rerun.ids


def test_a_comment_keeps_every_verdict_and_a_moved_failure_is_graded_again(
    tmp_path: Path,
) -> None:
    moved = SOURCE.replace('"""A lesson file."""', '"""A lesson file."""\n# a note')
    plan = _plan(tmp_path, SOURCE, moved, PASSING)
    assert plan is not None and plan.everything_kept
    assert plan.rerun.passed == ("test_first", "test_second")
    failing = {**PASSING, "test_second": (("second",), "failed")}
    plan = _plan(tmp_path, SOURCE, moved, failing)
    assert plan is not None
    assert plan.rerun.ids == ("test_second",)  # its message may quote line numbers that moved
    same_lines = SOURCE.replace("return helper(x) + 1", "return helper(x) + 1  # why")
    plan = _plan(tmp_path, SOURCE, same_lines, failing)
    assert plan is not None and plan.everything_kept  # (test_first's lines changed: passed)


def test_a_gate_that_changed_grades_the_checks_on_it_again(tmp_path: Path) -> None:
    checks = {
        "test_first": (("first",), "failed"),
        "test_second": (("second",), "failed"),  # blocked by test_first in the real suite
    }
    gates = {"test_second": ("test_first",)}
    after = SOURCE.replace("helper(x) + 1", "helper(x) + 2")
    plan = _plan(tmp_path, SOURCE, after, checks, gates)
    assert plan is not None
    assert plan.rerun.ids == ("test_first", "test_second")
    # the other way round: test_second changed, its failed gate is decided again with it
    after = SOURCE.replace("jnp.sum(x)", "jnp.sum(x * x)")
    plan = _plan(tmp_path, SOURCE, after, checks, gates)
    assert plan is not None
    assert plan.rerun.ids == ("test_first", "test_second")


@pytest.mark.parametrize(
    "line",
    [
        "    global SCALE",
        "    fn = globals()['helper']",
        "    fn = eval('helper')",
        "    import sys; fn = sys.modules[__name__]",
    ],
)
def test_a_file_that_reaches_names_by_strings_keeps_nothing(tmp_path: Path, line: str) -> None:
    before = SOURCE.replace("def second(x):\n", f"def second(x):\n{line}\n")
    after = before.replace("helper(x) + 1", "helper(x) + 2")
    assert _plan(tmp_path, before, after, PASSING) is None


def test_a_check_that_handed_over_the_whole_module_is_graded_again(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "test_first", "test_second")
    lines = [
        line
        if not isinstance(rec.decode(line), rec.Uses) or "test_second" not in line
        else _line(rec.Uses("test_second", ("second",), whole=True))
        for line in _grading(PASSING)
    ]
    after = SOURCE.replace("helper(x) + 1", "helper(x) + 2")
    context = reuse.read_context(spec, SOURCE.encode(), {})
    earlier = reuse.Graded(SOURCE.encode(), context, tuple(lines))
    plan = reuse.plan(spec, earlier, after.encode(), context)
    assert plan is not None
    assert plan.rerun.ids == ("test_first", "test_second")


def test_an_incomplete_grading_lends_nothing(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "test_first", "test_second")
    context = reuse.read_context(spec, SOURCE.encode(), {})
    whole = _grading(PASSING)
    after = SOURCE.replace("jnp.sum(x)", "jnp.sum(x * x)")
    for lines in (
        whole[:-1],  # no Done
        (*whole[:-1], _line(rec.Unrun(("test_second",))), whole[-1]),
        tuple(line for line in whole if "test_second" not in line),
    ):
        assert (
            reuse.plan(spec, reuse.Graded(SOURCE.encode(), context, lines), after.encode(), context)
            is None
        )
    timed_out = tuple(  # test_first timed out: the machine's, maybe, not its code's
        line.replace('"status": "passed"', '"status": "timeout"') if "test_first" in line else line
        for line in whole
    )
    plan = reuse.plan(
        spec, reuse.Graded(SOURCE.encode(), context, timed_out), after.encode(), context
    )
    assert plan is not None and plan.rerun.ids == ("test_first", "test_second")


def test_merged_keeps_the_runs_import_and_puts_done_last() -> None:
    kept = (_line(rec.Start("a")), _line(rec.Result("a", "passed", 1.0)))
    ran = (_line(rec.Collected(("b",))), _line(rec.Import("lesson", ok=True)), _line(rec.Done()))
    assert reuse.merged(ran, kept) == (*ran[:2], *kept, ran[2])
    broken = (
        _line(rec.Collected(("b",))),
        _line(rec.Import("lesson", ok=False)),
        _line(rec.Done()),
    )
    assert reuse.merged(broken, kept) == broken


def test_a_stopped_grading_leaves_the_last_complete_one_to_lend(tmp_path: Path) -> None:
    """A save that stops the running grading (the next save came) or a grading with nothing
    to lend (its file did not import) keeps the last complete grading for the next save."""
    spec = _spec(tmp_path, "test_first", "test_second")
    lesson = tmp_path / "lesson.py"
    whole = _grading(PASSING)
    plans: list[reuse.Plan | None] = []

    def grading(lines: tuple[str, ...]) -> reuse.Run:
        def run(plan: reuse.Plan | None, on_graded: Any) -> ExerciseResult:
            plans.append(plan)
            on_graded(lines)
            ended = Ended(exit_code=0, records=lines)
            return results.assemble(spec, results.Ending(ended), lesson.name)

        return run

    kept = reuse.Kept()
    broken_import = (_line(rec.Collected(())), _line(rec.Import("lesson", ok=False)), whole[-1])
    for source, lines in (
        (SOURCE, whole),
        (SOURCE.replace("jnp.sum(x)", "jnp.sum(x * x)"), whole[:-1]),  # stopped: no Done
        (SOURCE.replace("SCALE = 2.0", "SCALE = 1 / 0"), broken_import),
        (SOURCE.replace("jnp.sum(x)", "jnp.sum(x * 2)"), whole),
    ):
        lesson.write_text(source)
        kept.grade(spec, lesson, {}, None, grading(lines), lambda: lesson)
    first, stopped, not_imported, last = plans
    assert first is None
    assert stopped is not None and not_imported is not None and last is not None
    assert last.rerun.ids == ("test_second",)  # against the first grading, still lent
    assert last.rerun.passed == ("test_first",)


# -- the real thing ------------------------------------------------------------------------


def _splice(source: str, other: str, name: str) -> str:
    """`source` with function `name` as `other` writes it (a student's edit of one function)."""
    import ast

    def segment(text: str) -> str:
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                lines = text.splitlines(keepends=True)
                return "".join(lines[node.lineno - 1 : node.end_lineno])
        raise AssertionError(name)

    return source.replace(segment(source), segment(other))


def _comparable(result: ExerciseResult) -> list[tuple[str, str, float, str]]:
    return [(c.id, c.status, c.score, c.message) for c in result.checks]


@pytest.mark.slow
@pytest.mark.parametrize("level", ["basic", "user", "strict"])
def test_watch_verdicts_equal_a_full_grading_save_after_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, level: str
) -> None:
    spec = next(s for s in catalog.exercises(ROOT / "grader" / "suites") if s.name == "03_jit")
    solution = (ROOT / "solutions" / "03_jit.py").read_text()
    fixtures = ROOT / "tests" / "fixtures" / "03_jit"

    def broken(text: str, fixture: str, name: str) -> str:
        return _splice(text, (fixtures / fixture / "03_jit.py").read_text(), name)

    looped = broken(solution, "python_loop_running_sum", "running_sum")
    two = broken(looped, "false_branch_x", "piecewise")
    three = broken(two, "one_step_short", "newton_sqrt")
    saves = [solution, looped, two, three, solution, solution + "\n# done\n"]
    if level != "basic":  # the judge's side is the same at every level: a shorter session
        saves = [solution, looped, looped + "\n# done\n"]
    folder = tmp_path / "student"
    folder.mkdir()
    lesson = folder / "03_jit.py"
    submission = Submission(folder, {"03_jit": lesson}, single="03_jit")
    options = policy.Options(cache_dir="")
    ran: list[tuple[str, ...] | None] = []
    real = engine.grade_one

    def spy(*args: Any, **kwargs: Any) -> Any:
        partial = kwargs.get("partial")
        ran.append(None if partial is None else partial.rerun.ids)
        return real(*args, **kwargs)

    got: dict[int, ExerciseResult] = {}
    done = threading.Event()

    def on_result(job: Job, result: ExerciseResult) -> None:
        got[job.number] = result
        done.set()

    monkeypatch.setattr(engine, "grade_one", spy)
    with Regrader(options, level, spec.imports, on_result) as regrader:
        for text in saves:
            lesson.write_text(text)
            done.clear()
            job = regrader.submit(spec, submission)
            assert done.wait(300)
            alone = tmp_path / f"alone{job.number}"
            alone.mkdir()
            shutil.copyfile(lesson, alone / "03_jit.py")
            full, worker = real(
                None,
                spec,
                Submission(alone, {"03_jit": alone / "03_jit.py"}, single="03_jit"),
                options,
                level,
                tmp_path / f"scratch{job.number}",
                spec.imports,
            )
            if worker is not None:
                worker.close()
            assert _comparable(got[job.number]) == _comparable(full), job.number
            assert full.score < full.max_score or text.startswith(solution)
    total = len(spec.checks)
    assert ran[0] is None  # the first save: everything
    assert ran[1] is not None and 0 < len(ran[1]) < total  # running_sum's checks, not all
    assert "test_piecewise_values" not in ran[1]
    assert len(ran) == len(saves) - 1  # the last save (a comment) ran no judge at all
