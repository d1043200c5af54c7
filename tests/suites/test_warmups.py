"""A judge's warm-up (`_shared.for_the_cache`) fills a compilation cache once, not once per
grading: a later judge on the same cache (a `grade watch` regrading, the next student of a
class) skips it; a judge without a cache never runs it; an edited suite warms again.

Each judge is a real process with JAX's persistent cache set the way the judge sets it
(`jax_cache.configure`), running a warm-up from a suite module written under `tmp_path`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harness import REPO

SUITE = """
from grader.suites._shared import for_the_cache
import jax.numpy as jnp

@for_the_cache
def warm():
    with open({runs!r}, "a") as log:
        log.write("ran\\n")
    jnp.arange(3.0).sum().block_until_ready()
"""

JUDGE = """
import sys
sys.path.insert(0, sys.argv[1])
from grader.sandbox import jax_cache
if sys.argv[2]:
    jax_cache.configure(sys.argv[2])
import warm_suite
warm_suite.warm()
warm_suite.warm()  # once per judge in any case
"""


def judge(folder: Path, cache: str) -> None:
    subprocess.run(
        [sys.executable, "-c", JUDGE, str(folder), cache],
        check=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )


def runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_a_warm_up_runs_once_per_cache_and_again_for_an_edited_suite(tmp_path: Path) -> None:
    log = tmp_path / "runs.txt"
    suite = tmp_path / "warm_suite.py"
    suite.write_text(SUITE.format(runs=str(log)))
    cache = tmp_path / "cache"
    cache.mkdir()

    judge(tmp_path, "")
    assert runs(log) == 0, "a judge without a compilation cache has nothing to fill"

    judge(tmp_path, str(cache))
    assert runs(log) == 1
    assert list((cache / "grader-warmed").iterdir()), "the warm-up leaves its mark"
    assert any(p.name.endswith("-cache") for p in cache.iterdir()), "and JAX's entries"

    judge(tmp_path, str(cache))
    assert runs(log) == 1, "a second judge on the same cache skips the warm-up"

    judge(tmp_path, str(tmp_path / "another"))
    assert runs(log) == 2, "another cache is warmed on its own"

    suite.write_text(suite.read_text() + "\n# edited\n")
    judge(tmp_path, str(cache))
    assert runs(log) == 3, "an edited suite warms the cache again"
