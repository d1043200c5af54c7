"""`grade assign`: stubs generated from the marked solutions, and the sync invariant."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT

from grader.course import assign


def stub(source: str) -> str:
    return assign.stub_source(textwrap.dedent(source), "lesson.py")


def test_exercises_are_generated_from_solutions() -> None:
    """The repository's invariant: exercises/ is exactly what solutions/ generate."""
    problems = assign.differences(ROOT / "solutions", ROOT / "exercises")
    assert not problems, "run `grade assign`:\n" + "\n".join(problems)


def test_fixture_exercises_are_generated_from_fixture_solutions() -> None:
    assert assign.differences(FIXTURES / "solutions", FIXTURES / "exercises") == []


def test_function_block_becomes_a_raise_at_its_indentation() -> None:
    out = stub('''
        def add_at(x, indices, values):
            """Doc."""
            # TODO: scatter-add
            ### BEGIN SOLUTION
            def helper(v):
                return v
            return x.at[indices].add(helper(values))
            ### END SOLUTION
        ''')
    assert out == textwrap.dedent('''
        def add_at(x, indices, values):
            """Doc."""
            # TODO: scatter-add
            raise NotImplementedError("add_at is not implemented yet")
        ''')


def test_method_and_nested_blocks_name_the_innermost_function() -> None:
    out = stub("""
        class FlaxMLP:
            def __call__(self, x):
                # TODO: three Dense layers
                ### BEGIN SOLUTION
                return x
                ### END SOLUTION
        """)
    assert '        raise NotImplementedError("__call__ is not implemented yet")\n' in out


def test_explicit_stub_lines_replace_a_module_level_block() -> None:
    out = stub("""
        import optax

        # TODO: the lesson's optimizer
        ### BEGIN SOLUTION
        ### STUB: optimizer = None  # TODO
        ### STUB: schedule = None
        optimizer = optax.adam(1e-3)
        schedule = 1e-3
        ### END SOLUTION
        """)
    assert out.endswith(
        "# TODO: the lesson's optimizer\noptimizer = None  # TODO\nschedule = None\n"
    )
    assert "optax.adam" not in out


def test_explicit_stub_keeps_relative_indentation_inside_a_function() -> None:
    out = stub("""
        def f(x):
            # TODO: return a marker
            ### BEGIN SOLUTION
            ### STUB: if x:
            ### STUB:     return None
            return x
            ### END SOLUTION
        """)
    assert "    # TODO: return a marker\n    if x:\n        return None\n" in out


def test_multi_line_todo_and_text_outside_blocks_are_kept() -> None:
    source = (FIXTURES / "solutions" / "01_sums.py").read_text()
    out = assign.stub_source(source)
    assert (
        "    # TODO: add up every element of xs,\n    # starting from 0\n    raise NotImplementedError"
        in out
    )
    assert '"""Return the sum of the numbers in xs (0 for an empty list)."""' in out


@pytest.mark.parametrize(
    ("source", "phrase"),
    [
        ("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n", "# TODO"),
        ("def f():\n    # TODO: x\n    ### BEGIN SOLUTION\n    return 1\n", "never closed"),
        ("def f():\n    return 1\n    ### END SOLUTION\n", "without a"),
        (
            "def f():\n    # TODO: x\n    ### BEGIN SOLUTION\n    # TODO: y\n    ### BEGIN SOLUTION\n    return 1\n",
            "inside the block",
        ),
        ("# TODO: x\n### BEGIN SOLUTION\nopt = 1\n### END SOLUTION\n", "### STUB:"),
        (
            "def f():\n    # TODO: x\n    ### BEGIN SOLUTION\n    ### END SOLUTION\n    return 1\n",
            "empty",
        ),
        ("def f():\n    # TODO: x\n    ### BEGIN SOLUTIONS\n    return 1\n", "exactly"),
        ("x = 1\n### STUB: x = 2\n", "outside"),
        ("def f(:\n", "does not parse"),
    ],
)
def test_malformed_markers_are_named_with_file_and_line(source: str, phrase: str) -> None:
    with pytest.raises(assign.MarkerError, match=r"lesson\.py:") as info:
        assign.stub_source(source, "lesson.py")
    assert phrase in str(info.value)


def test_check_lists_files_that_differ_and_assign_fixes_them(
    course: Path, grade: Callable[..., tuple[int, str]]
) -> None:
    exercises = course / "exercises"
    (exercises / "01_sums.py").write_text("# edited by hand\n")
    (exercises / "02_words.py").unlink()
    (exercises / "99_extra.py").write_text("")

    code, out = grade(
        "assign", "--solutions", str(course / "solutions"), "--out", str(exercises), "--check"
    )
    assert code == 1
    assert "01_sums.py differs from the stub" in out and "-# edited by hand" in out
    assert "02_words.py is missing" in out
    assert "99_extra.py has no solution" in out
    assert "run `grade assign`" in out

    code, out = grade("assign", "--solutions", str(course / "solutions"), "--out", str(exercises))
    assert code == 0 and "2 stub(s) changed" in out
    assert (exercises / "01_sums.py").read_text() == (
        FIXTURES / "exercises" / "01_sums.py"
    ).read_text()
    code, out = grade("assign", "--solutions", str(course / "solutions"), "--out", str(exercises))
    assert code == 0 and "0 stub(s) changed" in out


def test_malformed_solution_is_a_usage_error(
    course: Path, grade: Callable[..., tuple[int, str]]
) -> None:
    (course / "solutions" / "03_bad.py").write_text(
        "# TODO: x\n### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n"
    )
    code, out = grade(
        "assign", "--solutions", str(course / "solutions"), "--out", str(course / "exercises")
    )
    assert code == 2
    assert "03_bad.py:2: a block outside a function needs its stub spelled out" in out
