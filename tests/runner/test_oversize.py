"""A lesson file over its size limit says so (limits name themselves).

Before, a notebook over the limit was left out of the copy without a word, and its grading
said "No such file or directory". The files here are sparse: their size costs no disk.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import catalog
from grader.runner import engine, policy
from grader.runner.submission import MAX_LESSON_BYTES, MAX_NOTEBOOK_BYTES, find

SUITES = Path(engine.__file__).resolve().parents[1] / "suites"


@pytest.mark.parametrize(
    ("name", "size", "said"),
    [
        (
            "03_jit.ipynb",
            MAX_NOTEBOOK_BYTES + 1,
            "03_jit.ipynb is 50.0 MB, over the 50 MB a notebook",
        ),
        ("03_jit.ipynb", (64 << 20) + 1, "03_jit.ipynb is 67.1 MB, over the 50 MB a notebook"),
        ("03_jit.py", MAX_LESSON_BYTES + 1, "03_jit.py is 2.0 MB, over the 2 MB a lesson file"),
    ],
)
def test_a_file_over_its_limit_is_named_with_its_size_and_the_fix(
    tmp_path: Path, name: str, size: int, said: str
) -> None:
    folder = tmp_path / "submission"
    folder.mkdir()
    with open(folder / name, "wb") as big:
        big.truncate(size)
    spec = next(s for s in catalog.exercises(SUITES) if s.name == "03_jit")
    submission = find(folder, [spec.name])
    result, worker = engine.grade_one(
        None, spec, submission, policy.Options(cache_dir=""), "basic", tmp_path / "scratch", ()
    )
    assert worker is None  # decided before any process started
    assert result.status == "error" and result.message.startswith(said), result.message
    assert ("Clear All Outputs" in result.message) == name.endswith(".ipynb")
    assert "No such file" not in result.message
    assert {c.message for c in result.checks} == {"not run: the file is too large to grade"}
    assert result.score == 0 and result.max_score == spec.max_score
