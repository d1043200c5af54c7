"""A suite for the cache tests: its judge compiles a reference program of its own.

Most lesson suites build their inputs in NumPy and compile little in the judge, and what
they compile depends on how each is written, so the cache tests grade with this one, whose
judge always compiles `_reference` once per grading.
"""

LESSON = "cached"
TITLE = "A judge that compiles its reference"
TIMEOUT = 60

import jax
import numpy as np

from grader.authoring import check


@jax.jit
def _reference(x):
    return x * 2.0 + 1.0


@check("affine(x) equals the judge's compiled 2x + 1", points=1, hint="-")
def test_affine(student):
    x = np.arange(4.0, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(student.affine(x)), np.asarray(_reference(x)))
