"""Trivial answers score 0 in every lesson file.

Each variant of `trivial.py` (functions returning None, 0.0, their first argument, or
zeros shaped like it) is a student of one class, graded in one `grade batch` (the real
engine, judge and sandbox); no check of any lesson file may pay for them. One test, so
the batch runs once under xdist; `TRIVIAL_LESSONS=03_jit,ex2_per_example_grads` grades
only those files (for suite authors at work).
"""

import json
import os
import subprocess
import sys

import pytest
import trivial
from harness import REPO

from grader.catalog import exercises

pytestmark = pytest.mark.slow

LESSONS = sorted(spec.name for spec in exercises())


def grade_trivial(root, lessons):
    """`{variant: {lesson: exercise JSON}}` from one batch over every variant."""
    for variant in trivial.VARIANTS:
        trivial.write_trivial(root / "class" / variant, variant, lessons)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "batch",
            str(root / "class"),
            "--out",
            str(root / "out"),
            "--workers",
            "2",
            "--only",
            ",".join(lessons),
            "-q",
            "--require-isolation",
            "basic",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    graded = {}
    for variant in trivial.VARIANTS:
        doc = json.loads((root / "out" / "students" / f"{variant}.json").read_text())
        graded[variant] = {e["name"]: e for e in doc["exercises"]}
    return graded


def test_the_variants_rewrite_functions_and_methods_but_keep_the_module():
    source = (
        "import jax\nK = 3\n\ndef f(x, y):\n    return x * y\n\ndef _helper(x):\n    return x\n\n"
        "class M:\n    def setup(self):\n        self.k = 1\n\n    def __call__(self, x):\n"
        "        return x + 1\n"
    )
    identity = trivial.trivial_source(source, "identity")
    namespace = {}
    exec(compile(identity, "<trivial>", "exec"), namespace)
    assert namespace["K"] == 3 and namespace["f"](5, 7) == 5 and namespace["_helper"](2) == 2
    assert namespace["M"]()(9) == 9
    none = {}
    exec(compile(trivial.trivial_source(source, "none"), "<trivial>", "exec"), none)
    assert none["f"](1, 2) is None


def test_trivial_answers_score_nothing_in_any_lesson_file(tmp_path):
    wanted = os.environ.get("TRIVIAL_LESSONS")
    lessons = wanted.split(",") if wanted else LESSONS
    graded = grade_trivial(tmp_path, lessons)
    paid = {}
    for variant, by_lesson in graded.items():
        for lesson in lessons:
            assert by_lesson[lesson]["status"] != "skipped", f"{lesson} was not graded"
            for check in by_lesson[lesson]["checks"]:
                if check["score"] > 0:
                    paid.setdefault(lesson, []).append(
                        f"{variant}: {check['id']} ({check['score']:g})"
                    )
    assert not paid, "trivial answers earned points:\n" + "\n".join(
        f"{lesson}: {', '.join(items)}" for lesson, items in sorted(paid.items())
    )
