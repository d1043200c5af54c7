"""Trivial answers score 0 in every lesson file.

Each variant of `trivial.py` (functions returning None, 0.0, their first argument, or
zeros shaped like it) is a student of one class, graded with `grade batch` (the real
engine, judge and sandbox); every check of every selected lesson file must earn nothing.
`-k 03_jit` grades only that file.
"""

import json
import subprocess
import sys

import pytest
import trivial
from lesson_grading import REPO

from grader.catalog import exercises

pytestmark = pytest.mark.slow

LESSONS = sorted(spec.name for spec in exercises())
_GRADED = {}


@pytest.fixture(scope="module")
def gradebook(request, tmp_path_factory):
    """The batch's results, `{variant: {lesson: exercise JSON}}`, for the selected lessons."""
    selected = sorted({item.callspec.params["lesson"] for item in request.session.items
                       if item.module is request.module and hasattr(item, "callspec")})
    if not _GRADED:
        root = tmp_path_factory.mktemp("trivial")
        for variant in trivial.VARIANTS:
            trivial.write_trivial(root / "class" / variant, variant, selected)
        done = subprocess.run(
            [sys.executable, "-m", "grader", "batch", str(root / "class"), "--out",
             str(root / "out"), "--workers", "2", "--only", ",".join(selected), "-q",
             "--require-isolation", "basic"],
            cwd=REPO, capture_output=True, text=True, timeout=1800, check=False,
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        for variant in trivial.VARIANTS:
            doc = json.loads((root / "out" / "students" / f"{variant}.json").read_text())
            _GRADED[variant] = {e["name"]: e for e in doc["exercises"]}
    return _GRADED


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


@pytest.mark.parametrize("lesson", LESSONS)
def test_trivial_answers_score_nothing(lesson, gradebook):
    paid = {}
    for variant, graded in gradebook.items():
        exercise = graded[lesson]
        for check in exercise["checks"]:
            if check["score"] > 0:
                paid[f"{variant}: {check['id']}"] = check["score"]
    assert not paid, f"{lesson}: trivial answers earned points: {paid}"
