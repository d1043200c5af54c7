"""`grade batch` on odd inputs: files the grader refuses are not compared
for similarity, and every student who could not be graded is named with the reason, on the
terminal and in summary.html (a real batch on the fixture course)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from grader.batch import pool as batch
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


def _odd_class(course: Path, tmp_path: Path) -> Path:
    """One student per cause, and tom, whose file is right."""
    submissions = tmp_path / "odd"
    solution = (course / "solutions" / "01_sums.py").read_bytes()
    files: dict[str, bytes] = {
        "tom": solution,
        "big": solution + b"#" * (MAX_LESSON_BYTES + 1) + b"\n",
        "enc": b"# caf\xe9\n" + solution,  # Latin-1, no declaration: python3 refuses it
        "latin": b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + solution,  # declared: graded
        "syn": b"def add(a, b)\n    return a + b\n",
        "nul": solution + b"\x00\n",  # not text: python3 refuses it too
        "stub": (course / "exercises" / "01_sums.py").read_bytes(),
        "crash": b"import os\nos._exit(3)\n",
    }
    for name, data in files.items():
        (submissions / name).mkdir(parents=True)
        (submissions / name / "01_sums.py").write_bytes(data)
    (submissions / "lin").mkdir()
    os.symlink(submissions / "tom" / "01_sums.py", submissions / "lin" / "01_sums.py")
    os.symlink(course / "solutions", submissions / "dir")  # the student folder: a link
    (submissions / "sub").mkdir()
    os.symlink(course / "solutions", submissions / "sub" / "exercises")  # its exercises/
    (submissions / "none").mkdir()
    (submissions / "none" / "README.txt").write_text("my files are elsewhere\n")
    return submissions


EXPECTED = {  # student -> what the terminal line says after the score
    "big": "0.0% - 01_sums oversize, not graded",
    "crash": "0.0% - 01_sums crashed",
    "dir": "0.0% - 01_sums symlink, not followed",
    "sub": "0.0% - 01_sums symlink, not followed",
    "enc": "0.0% - 01_sums encoding Python cannot read",
    "nul": "0.0% - 01_sums encoding Python cannot read",
    "latin": "100.0%",
    "lin": "0.0% - 01_sums symlink, not followed",
    "none": "0.0% - 01_sums not attempted",
    "stub": "0.0% - 01_sums not attempted",
    "syn": "0.0% - 01_sums syntax error",
    "tom": "100.0%",
}


@pytest.mark.slow
def test_every_student_not_graded_is_named_with_the_cause(
    course: Path, grade: Callable[..., tuple[int, str]], tmp_path: Path
) -> None:
    submissions = _odd_class(course, tmp_path)
    out = tmp_path / "out"
    code, text = grade(
        "batch", str(submissions), "--out", str(out), "--suites", str(course / "suites"),
        "--only", "01_sums", "--stubs", str(course / "exercises"), "--timeout", "8",
    )  # fmt: skip
    assert code == 0, text
    lines = {
        line.split("] ", 1)[1].split(": ", 1)[0]: re.sub(
            r" \(about [0-9:]+ left\)$", "", line.split(": ", 1)[1]
        )
        for line in text.splitlines()
        if line.startswith("[") and "] " in line
    }
    assert lines == EXPECTED, text
    # the summary names each cause, apart from crashes
    summary = (out / "summary.html").read_text()
    attention = summary[summary.index(">Needs attention") : summary.index(">Roster<")]
    for who, why in [
        ("big", "oversize, not graded: 01_sums"),
        ("lin", "symlink, not followed: 01_sums"),
        ("dir", "symlink, not followed: 01_sums"),
        ("sub", "symlink, not followed: 01_sums"),
        ("enc", "encoding Python cannot read: 01_sums"),
        ("nul", "encoding Python cannot read: 01_sums"),
        ("syn", "syntax error: 01_sums"),
        ("crash", "crashed: 01_sums"),
        ("stub", "nothing started"),
        ("none", "nothing started"),
    ]:
        row = attention[attention.index(f">{who}<") :].split("</tr>", 1)[0]
        assert why in row, (who, row)
    assert ">tom<" not in attention and ">latin<" not in attention
    # where the links point is said, and what they point to is not graded
    dir_json = (out / "students" / "dir.json").read_text()
    assert f"is a symlink to {course / 'solutions'}" in dir_json
    tally = summary[summary.index('id="not-graded"') :].split("</p>", 1)[0]
    for words in ("oversize, not graded: 1", "symlink, not followed: 3", "syntax error: 1",
                  "encoding Python cannot read: 2", "not attempted: 2", "crashed: 1"):  # fmt: skip
        assert words in tally, tally
