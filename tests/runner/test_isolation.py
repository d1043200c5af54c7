"""Hostile and broken submissions, graded by the real `grade` in a real subprocess.

Each fixture folder in `submissions/` holds a faulty `03_jit.py` (and for some a
`conftest.py`, `pytest.ini`, `sitecustomize.py` or `jax.py` beside it); the test
adds the correct `04_vmap.py` from `solutions/` (a file that grades in about a second,
so the endless loop's time limit can be short). Each must give the right status for
03_jit, leave 04_vmap fully graded, write the JSON and HTML
reports, and never raise 03_jit's score above what its code deserves.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUBMISSIONS = Path(__file__).parent / "submissions"
OTHER = "04_vmap"

pytestmark = pytest.mark.slow


def grade(
    folder: Path, *extra: str, timeout: float = 300
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = folder.parent / "out"
    out.mkdir(exist_ok=True)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            str(folder),
            "--only",
            f"03_jit,{OTHER}",
            "--json",
            str(out / "results.json"),
            "--html",
            str(out / "report.html"),
            "--no-color",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=folder.parent,
    )
    assert (out / "report.html").is_file(), proc.stdout + proc.stderr
    results = json.loads((out / "results.json").read_text())
    return proc, results


def submission(tmp_path: Path, fault: str) -> Path:
    folder = tmp_path / "submission"
    shutil.copytree(SUBMISSIONS / fault, folder)
    shutil.copy(ROOT / "solutions" / f"{OTHER}.py", folder / f"{OTHER}.py")
    return folder


def by_name(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in results["exercises"]}


# Options for some faults: the endless loop's time limit short; 64 threads that allocate at once
# within 1 GiB (their stacks and malloc arenas reserve address space, not memory: without the
# arena cap and the thread budget, "can't start new thread" at 1 GiB on 2 cores, and correct
# solutions ran out of 4 GiB on 13; grader.runner.budget).
EXTRA = {"infinite_loop": ["--timeout", "30"], "many_threads": ["--memory", "1"]}

# fault -> (status of 03_jit, a phrase its message must contain, highest fraction of 03_jit's points)
CASES = {
    "syntax_error": ("error", "03_jit.py has a syntax error at line 4: expected ':'.", 0.0),
    "import_error": ("error", "scann", 0.0),
    "sys_exit": ("error", "sys.exit(0)", 0.0),
    "os_exit": ("error", "process running your code stopped", 0.99),
    "infinite_loop": ("error", "`running_sum` was still running when", 0.99),
    "huge_alloc": ("error", "memory", 0.99),
    "five_gib": ("error", "memory", 0.99),
    # contained; a module that starts threads earns no observed points
    "many_threads": ("failed", "thread", 0.75),
    "flood": ("passed", "", 1.0),
    "conftest_cheat": ("failed", "", 0.5),
    "jax_shadow": ("failed", "", 0.5),
}


@pytest.mark.parametrize("fault", sorted(CASES))
def test_fault_is_contained(tmp_path: Path, fault: str) -> None:
    status, phrase, most = CASES[fault]
    proc, results = grade(submission(tmp_path, fault), *EXTRA.get(fault, []))
    assert proc.returncode == 0, proc.stderr
    exercises = by_name(results)

    jit = exercises["03_jit"]
    assert jit["status"] == status, json.dumps(jit, indent=1)[:3000]
    assert jit["score"] <= most * jit["max_score"] + 1e-9
    if phrase:
        text = jit["message"] + " ".join(c["message"] for c in jit["checks"])
        assert phrase in text, text[:2000]

    if fault == "syntax_error":  # said once
        assert jit["message"].count("expected ':'") == 1, jit["message"]

    if fault == "infinite_loop":  # the check that hung is the one marked; the other functions
        # are judged in a fresh sandbox; running_sum is not called again
        statuses = {c["id"]: c["status"] for c in jit["checks"]}
        assert list(statuses.values()).count("timeout") == 1, statuses
        for check in jit["checks"]:
            if check["id"].startswith(("test_piecewise", "test_newton")):
                assert check["status"] == "passed", check
        hung = next(c for c in jit["checks"] if c["status"] == "timeout")
        # where it hung is the sandbox's own stack, read when the share ran out; on a loaded
        # machine (two CI runs under -n 2) it may not be read in time: when given, it is right
        if "in `running_sum`:" in hung["message"]:  # the loop's line or its body's (3.11 puts
            # the backward jump of `while True: pass` on the `pass`)
            assert any(
                f"03_jit.py, line {where}, in `running_sum`: `{code}`" in hung["message"]
                for where, code in ((11, "while True:"), (12, "pass"))
            ), hung["message"]
        if hung["location"] is not None:
            assert hung["location"]["line"] in (11, 12), hung  # the loop's line or its body's

    other = exercises[OTHER]
    assert other["status"] == "passed", json.dumps(other, indent=1)[:3000]
    assert other["score"] == other["max_score"] > 0


def test_flood_is_capped_with_a_notice(tmp_path: Path) -> None:
    _, results = grade(submission(tmp_path, "flood"))
    output = by_name(results)["03_jit"]["output"]
    assert "[output truncated: 52,428,8" in output
    assert len(output) < 100_000


def test_shadowing_files_are_not_copied_or_loaded(tmp_path: Path) -> None:
    _, results = grade(submission(tmp_path, "jax_shadow"))
    jit = by_name(results)["03_jit"]
    # the real JAX traced the submission: the scan check (its values right) saw a real jaxpr
    assert any("scan" in c["message"] for c in jit["checks"]), jit
    assert "SystemExit" not in json.dumps(results)
