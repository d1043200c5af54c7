"""`grade batch` on odd inputs (issue 34 item 4): files the grader refuses are not compared
for similarity, and every student who could not be graded is named with the reason."""

from __future__ import annotations

import os
from pathlib import Path

from grader.batch import grading as batch
from grader.runner.submission import MAX_LESSON_BYTES

LESSONS = ["01_sums", "02_words"]
ORIGINAL = """def add(a, b):
    result = a
    result = result + b
    return result


def total(xs):
    running = 0
    for x in xs:
        if x is None:
            continue
        running = running + x
    return running
"""


def _class(tmp_path: Path) -> Path:
    """tom's file; sam's copy of it; big's copy padded past the size limit with comments;
    lin's file a link to tom's; the last three are alike tom's once comments are dropped."""
    submissions = tmp_path / "class"
    for name in ("tom", "sam", "big", "lin"):
        (submissions / name).mkdir(parents=True)
    (submissions / "tom" / "01_sums.py").write_text(ORIGINAL)
    (submissions / "sam" / "01_sums.py").write_text(ORIGINAL.replace("result", "out"))
    padding = "# " + "x" * 98 + "\n"
    (submissions / "big" / "01_sums.py").write_text(
        ORIGINAL + padding * (MAX_LESSON_BYTES // len(padding) + 1)
    )
    os.symlink(submissions / "tom" / "01_sums.py", submissions / "lin" / "01_sums.py")
    return submissions


def test_files_the_grader_refuses_are_not_compared(tmp_path: Path) -> None:
    submissions = _class(tmp_path)
    jobs = [batch.job_for(submissions, n, LESSONS) for n in batch.students(submissions)]
    assert all(job.files for job in jobs)  # each has its lesson file, as found
    pairs = batch.similar_pairs(jobs, tmp_path / "no-stubs")
    assert [(p.first, p.second, p.score) for p in pairs] == [("sam", "tom", 1.0)]
    # what the refused files are: graded, they would have been named
    assert not batch.graded(submissions / "big" / "01_sums.py")
    assert not batch.graded(submissions / "lin" / "01_sums.py")
    assert batch.graded(submissions / "sam" / "01_sums.py")
