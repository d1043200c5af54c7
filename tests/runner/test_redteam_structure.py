"""Red team: structural and observed properties cannot be forged into points.

Each submission in `submissions/structure/` is a whole 03_jit, graded end to end by the real
`grade` at every isolation level the machine allows (as `test_redteam.py`), against its
control graded the same way:

- `forged_patch` (the issue's attack: three structurally wrong functions, and `jax.make_jaxpr`,
  `jax.export.export`, the probe registry and the probes' helpers patched at import to
  describe honest twins) and `forged_stealth` (the same patches through `[jax][0]`, which the
  judge's reading of the source does not name) gain nothing over `wrong_structure`, the same
  functions without a forgery: the structural checks read the compiled program in the judge,
  the sandbox looks probes up in its copy of the registry taken before the import, probes
  call JAX through references bound before it, and a module that patches gets no credit for
  observations;
- `impure_thread` (a thread that keeps undoing the functions' global mutation, no patching)
  and `impure_thread_stealth` (the same thread started by `logging.handlers.QueueListener`)
  gain nothing over `impure`, the same functions without the thread: the thread is named in
  the source, or counted by the sandbox's thread report, and observations get no credit;
- the solution's 03_jit keeps 21/21.

The payloads touch nothing outside their own process: they rewrite the grader's objects in
the sandbox's memory and start threads there, nothing else.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = Path(__file__).parent / "submissions" / "structure"
LEVELS = ["strict", "user", "basic"] if os.geteuid() == 0 else ["basic"]

pytestmark = pytest.mark.slow

# attack -> its control
ATTACKS = {
    "forged_patch": "wrong_structure",
    "forged_stealth": "wrong_structure",
    "impure_thread": "impure",
    "impure_thread_stealth": "impure",
}
STRUCTURAL = (
    "test_piecewise_cond",
    "test_running_sum_scan",
    "test_running_sum_no_growth",
    "test_newton_loop_primitive",
    "test_newton_no_growth",
)


def grade_one(source: Path, base: Path, level: str) -> dict:
    """`source` graded as the 03_jit of a folder of its own; the 03_jit entry of the report."""
    folder = base / source.stem / "submission"
    folder.mkdir(parents=True)
    for path in (base, base / source.stem, folder):
        path.chmod(0o755)
    shutil.copy(source, folder / "03_jit.py")
    out = base / source.stem / "results.json"
    proc = subprocess.run(
        [
            sys.executable, "-m", "grader", str(folder), "--only", "03_jit", "--json", str(out),
            "--no-html", "--no-color", "--jobs", "1", "--isolation", level,
        ],
        capture_output=True, text=True, timeout=600, cwd=base / source.stem,
    )  # fmt: skip
    assert out.is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["isolation"]["level"] == level
    (entry,) = doc["exercises"]
    return entry


def grade_all(sources: list[Path], base: Path, level: str) -> dict[str, dict]:
    base.chmod(0o755)
    with ThreadPoolExecutor(2) as pool:
        entries = pool.map(lambda s: grade_one(s, base, level), sources)
    return {s.stem: e for s, e in zip(sources, entries, strict=True)}


def checks(entry: dict) -> dict[str, dict]:
    return {c["id"]: c for c in entry["checks"]}


@pytest.fixture(scope="module")
def controls(tmp_path_factory) -> dict[str, dict]:
    sources = [SUBMISSIONS / f"{name}.py" for name in sorted(set(ATTACKS.values()))]
    return grade_all(sources, tmp_path_factory.mktemp("controls"), "basic")


def test_controls_are_what_the_attacks_start_from(controls):
    wrong = checks(controls["wrong_structure"])
    assert all(wrong[c]["status"] == "failed" for c in STRUCTURAL), wrong
    assert wrong["test_traced_once"]["status"] == wrong["test_pure"]["status"] == "passed"
    impure = checks(controls["impure"])
    assert impure["test_pure"]["status"] == "failed"
    assert all(impure[c]["status"] == "passed" for c in STRUCTURAL), impure


@pytest.mark.parametrize("level", LEVELS)
def test_forgeries_gain_nothing_and_the_solution_keeps_full_marks(tmp_path, controls, level):
    sources = [SUBMISSIONS / f"{name}.py" for name in ATTACKS]
    sources.append(ROOT / "solutions" / "03_jit.py")
    got = grade_all(sources, tmp_path, level)

    for attack, control in ATTACKS.items():
        entry, base = got[attack], controls[control]
        assert entry["max_score"] == base["max_score"], attack
        assert entry["score"] <= base["score"], (attack, entry["score"], base["score"])
        by_id, base_by_id = checks(entry), checks(base)
        for check_id, check in by_id.items():  # check by check, not only in total
            assert check["score"] <= base_by_id[check_id]["score"], (attack, check_id, check)
        for check_id in STRUCTURAL:
            if attack.startswith("forged"):
                assert by_id[check_id]["status"] == "failed", (attack, by_id[check_id])

    # The patched module is told why its observations earn nothing; the stealthy one, whose
    # patches reach nothing the probes call, fails on its structure as its control does.
    patched = checks(got["forged_patch"])["test_traced_once"]["message"]
    assert "imports the grader itself" in patched, patched
    stealth = checks(got["forged_stealth"])
    assert "read from its compiled program" in stealth["test_piecewise_cond"]["message"], stealth[
        "test_piecewise_cond"
    ]
    assert "threading" in checks(got["impure_thread"])["test_pure"]["message"]
    stealth_thread = got["impure_thread_stealth"]
    if stealth_thread["status"] != "error":  # at `user`, logging.handlers does not import there
        assert "thread(s) running" in checks(stealth_thread)["test_pure"]["message"]

    solution = got["03_jit"]
    assert solution["score"] == solution["max_score"] == 21, checks(solution)
