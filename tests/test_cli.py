"""The `grade` command end to end: options, exit codes, outputs, determinism.

Uses a small demo suite (`--suites`) so these tests stay fast and do not
depend on the lesson content; the real suites are graded in test_isolation.py
and the suites' own tests.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from grader.model import without_timings

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).parent / "runner" / "submissions"
SUITES = HERE / "demo_suites"


def grade(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grader", *args, "--suites", str(SUITES), "--no-color"],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def results(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text())
    return doc


def test_bad_path_exits_2_naming_it(tmp_path: Path) -> None:
    proc = grade(str(tmp_path / "nowhere"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "nowhere does not exist" in proc.stderr


def test_folder_without_lesson_files_exits_2(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    proc = grade(str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2
    assert "holds no lesson files" in proc.stderr


def test_unknown_only_exits_2(tmp_path: Path) -> None:
    proc = grade(str(HERE / "demo_good"), "--only", "99_nope", cwd=tmp_path)
    assert proc.returncode == 2
    assert "no lesson file named 99_nope" in proc.stderr


def test_output_into_missing_folder_exits_2_before_grading(tmp_path: Path) -> None:
    proc = grade(str(HERE / "demo_good"), "--json", str(tmp_path / "no" / "r.json"), cwd=tmp_path)
    assert proc.returncode == 2
    assert "does not exist; create it first" in proc.stderr
    assert "Grading" not in proc.stdout


def test_bad_option_value_exits_2(tmp_path: Path) -> None:
    proc = grade(str(HERE / "demo_good"), "--fail-under", "150", cwd=tmp_path)
    assert proc.returncode == 2
    assert "percentage" in proc.stderr


@pytest.mark.slow
def test_passing_submission_writes_every_report(tmp_path: Path) -> None:
    proc = grade(
        str(HERE / "demo_good"),
        "--json",
        "r.json",
        "--gradescope",
        "gs.json",
        "--junit",
        "j.xml",
        "--html",
        "r.html",
        "--fail-under",
        "100",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = results(tmp_path / "r.json")
    assert (doc["score"], doc["max_score"]) == (4.0, 4.0)
    assert doc["exercises"][0]["status"] == "passed"
    for name in ("gs.json", "j.xml", "r.html"):
        assert (tmp_path / name).stat().st_size > 0
    assert "PASS" in proc.stdout and "Total 4/4" in proc.stdout


@pytest.mark.slow
def test_failing_submission_below_threshold_exits_1_and_explains(tmp_path: Path) -> None:
    proc = grade(str(HERE / "demo_bad"), "--json", "r.json", "--fail-under", "60", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "below --fail-under 60%" in proc.stderr
    doc = results(tmp_path / "r.json")
    checks = {c["id"]: c for c in doc["exercises"][0]["checks"]}
    assert checks["test_double"]["status"] == "failed"
    assert "expected: 6.0" in checks["test_double"]["message"]
    assert checks["test_halve"]["score"] == pytest.approx(0.75)  # partial credit, 3 of 4
    assert checks["test_halve"]["visibility"] == "hidden"
    assert "double(3.0)" in proc.stdout  # the terminal shows the failure's message
    assert (tmp_path / "grade-report.html").is_file()  # the default HTML report


@pytest.mark.slow
def test_single_file_and_determinism(tmp_path: Path) -> None:
    first = grade(
        str(HERE / "demo_bad" / "demo.py"), "--json", "a.json", "--seed", "7", cwd=tmp_path
    )
    second = grade(
        str(HERE / "demo_bad" / "demo.py"), "--json", "b.json", "--seed", "7", cwd=tmp_path
    )
    assert first.returncode == second.returncode == 0
    a, b = results(tmp_path / "a.json"), results(tmp_path / "b.json")
    assert a["seed"] == 7 and "seed 7" in first.stdout
    assert without_timings(a) == without_timings(b)
    assert [e["name"] for e in a["exercises"]] == ["demo"]


# -- small things: --version, reports to standard output, grading from inside exercises/ -----


def test_version_is_the_packages(tmp_path: Path) -> None:
    import grader

    proc = grade("--version", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == f"grade {grader.__version__}\n"
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["version"] == grader.__version__


@pytest.mark.slow
def test_json_dash_writes_the_results_to_standard_output(tmp_path: Path) -> None:
    proc = grade(str(HERE / "demo_good"), "--json", "-", "--no-html", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # nothing else on standard output
    assert (doc["score"], doc["max_score"]) == (4.0, 4.0)
    assert "Total 4/4" in proc.stderr  # what people read: on standard error
    assert not (tmp_path / "-").exists()


def test_only_one_report_goes_to_standard_output(tmp_path: Path) -> None:
    proc = grade(str(HERE / "demo_good"), "--json", "-", "--junit", "-", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--json - and --junit -: only one report can go to standard output" in proc.stderr
    proc = grade(str(HERE / "demo_good"), "--html", "-", cwd=tmp_path)
    assert proc.returncode == 2 and "the HTML report needs a file" in proc.stderr


@pytest.mark.slow
def test_grade_inside_exercises_grades_that_folder(tmp_path: Path) -> None:
    exercises = tmp_path / "exercises"
    exercises.mkdir()
    (exercises / "demo.py").write_text((HERE / "demo_good" / "demo.py").read_text())
    proc = grade("--no-html", cwd=exercises)
    assert proc.returncode == 0, proc.stderr
    assert "Grading 1 lesson file in the working folder" in proc.stdout
    assert "Total 4/4" in proc.stdout
    # From the course folder, exercises/ is still the default.
    proc = grade("--no-html", "--json", "r.json", cwd=tmp_path)
    assert proc.returncode == 0 and "Grading 1 lesson file in exercises" in proc.stdout


def test_a_folder_without_exercises_nor_lesson_files_says_so(tmp_path: Path) -> None:
    proc = grade(cwd=tmp_path)
    assert proc.returncode == 2
    assert "exercises does not exist" in proc.stderr


# -- isolation: forced, required, and what this machine allows ------------------------------


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Pretend this machine allows only `user` isolation (no namespaces)."""
    from grader.runner import policy
    from grader.sandbox.isolation import Isolation

    found = Isolation("user", ("namespaces (unshare is not permitted: no CAP_SYS_ADMIN)",))
    monkeypatch.setattr(policy, "detected", lambda: found)
    return found


def run_in_process(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    from grader import cli

    code = cli.main([*argv, "--suites", str(SUITES), "--no-color", "--no-html"])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_forcing_more_isolation_than_the_machine_allows_exits_2(machine: Any, capsys: Any) -> None:
    code, text = run_in_process(capsys, str(HERE / "demo_good"), "--isolation", "strict")
    assert code == 2
    assert "--isolation strict: this machine allows only 'user' isolation" in text
    assert "no CAP_SYS_ADMIN" in text
    assert "Grading" not in text


def test_requiring_more_isolation_than_detected_exits_2(machine: Any, capsys: Any) -> None:
    code, text = run_in_process(capsys, str(HERE / "demo_good"), "--require-isolation", "strict")
    assert code == 2
    assert "--require-isolation strict: the detected isolation is 'user', below 'strict'" in text
    assert "missing: namespaces" in text


def test_a_forced_level_below_the_required_one_exits_2(machine: Any, capsys: Any) -> None:
    code, text = run_in_process(
        capsys, str(HERE / "demo_good"), "--isolation", "basic", "--require-isolation", "user"
    )
    assert code == 2
    assert "the chosen isolation is 'basic', below 'user'" in text


def test_isolation_for_says_what_a_forced_level_leaves_out(machine: Any) -> None:
    from grader.runner import policy

    chosen = policy.isolation_for(policy.Options(isolation="basic"))
    assert chosen.level == "basic"
    assert chosen.missing[0].startswith(
        "a user of its own for the sandbox (not used: --isolation basic)"
    )
    assert chosen.missing[-1].startswith("namespaces (unshare is not permitted")
    assert policy.isolation_for(policy.Options()) == machine
    assert (
        policy.isolation_for(policy.Options(isolation="user", require_isolation="user")) == machine
    )


def test_unknown_isolation_level_is_a_usage_error(tmp_path: Path) -> None:
    proc = grade(str(HERE / "demo_good"), "--isolation", "paranoid", cwd=tmp_path)
    assert proc.returncode == 2
    assert "invalid choice: 'paranoid'" in proc.stderr


# -- --jobs: one name, and a default from the CPUs and the memory ------------------------------

GIB = 2**30


@pytest.mark.parametrize(
    ("cpus", "available", "memory", "expected"),
    [
        (8, None, 4.0, 8),  # memory unknown (no /proc/meminfo): one job per CPU
        (2, 23 * GIB, 4.0, 2),  # enough memory: one job per CPU
        (8, int(7.5 * GIB), 4.0, 1),  # 7.5 GiB hold one 4 GiB grading
        (8, 13 * GIB, 4.0, 3),
        (4, GIB, 4.0, 1),  # never fewer than one
    ],
)
def test_auto_jobs_is_the_cpus_lowered_when_memory_is_short(
    cpus: int, available: int | None, memory: float, expected: int
) -> None:
    from grader import capacity

    jobs = capacity.auto_jobs(memory, cpus=cpus, available=available)
    assert jobs.count == expected
    assert jobs.why.startswith(f"{cpus} CPU")
    assert ("GiB of memory available" in jobs.why) == (expected < cpus)


def test_available_memory_reads_memavailable(tmp_path: Path) -> None:
    from grader import capacity

    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       32768000 kB\nMemAvailable:    2097152 kB\n")
    assert capacity.available_memory(meminfo) == 2 * GIB
    assert capacity.available_memory(tmp_path / "missing") is None
    if Path("/proc/meminfo").is_file():
        assert (capacity.available_memory() or 0) > 0
    assert capacity.cpus() >= 1


def test_only_selects_in_the_suites_order_and_names_the_unknown(tmp_path: Path) -> None:
    from grader import catalog, grading

    found = catalog.exercises(catalog.SUITES_DIR)
    chosen = grading.select(found, " 04_vmap, 02_grad.py,")
    assert [s.name for s in chosen] == ["02_grad", "04_vmap"]
    assert grading.select(found, "") == list(found)
    with pytest.raises(grading.SelectionError, match="--only: no lesson file named 99_nope"):
        grading.select(found, "03_jit,99_nope")
    with pytest.raises(grading.SelectionError, match="no such folder"):
        grading.exercises(tmp_path / "missing")


def test_workers_is_a_deprecated_alias_of_jobs(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from grader.commands import shared

    parser = argparse.ArgumentParser(prog="grade batch")
    shared.add_jobs_option(parser, what="students", workers_alias=True)
    parser.add_argument("--memory", type=float, default=4.0)
    assert parser.parse_args(["--workers", "3"]).jobs == 3
    assert "grade batch: warning: --workers is deprecated; use --jobs" in capsys.readouterr().err
    assert parser.parse_args(["--jobs", "2"]).jobs == 2
    assert capsys.readouterr().err == ""
    given = shared.jobs(parser.parse_args(["--jobs", "5"]))
    assert (given.count, given.why) == (5, "")
    assert shared.jobs(parser.parse_args([])).count >= 1
    with pytest.raises(SystemExit):
        parser.parse_args(["--workers", "0"])


def test_jobs_below_one_is_a_usage_error(tmp_path: Path) -> None:
    proc = grade(str(HERE / "demo_good"), "--jobs", "0", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--jobs: must be at least 1" in proc.stderr


def test_no_command_imports_the_command_line_module() -> None:
    """Commands share options, argument types and UsageError through grader.commands.shared;
    importing grader.cli from a command is an import cycle (cli imports the commands)."""
    commands = Path(__file__).resolve().parents[1] / "grader" / "commands"
    offenders = [
        p.name
        for p in sorted(commands.glob("*.py"))
        if re.search(
            r"^\s*(from grader import ([\w ]+, )*cli\b|from grader\.cli import|import grader\.cli)",
            p.read_text(encoding="utf-8"),
            re.M,
        )
    ]
    assert offenders == []


@pytest.mark.slow
def test_grading_writes_nothing_into_the_working_folder(tmp_path: Path) -> None:
    """The grading processes run in a private folder: what a library writes relative to its
    working folder (Hypothesis's `.hypothesis/`) never lands in the user's."""
    work = tmp_path / "work"
    (work / "exercises").mkdir(parents=True)
    (work / "exercises" / "03_jit.py").write_text(
        (ROOT / "solutions" / "03_jit.py").read_text(encoding="utf-8")
    )
    done = subprocess.run(
        [sys.executable, "-m", "grader", "exercises", "--no-html", "--only", "03_jit"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in work.iterdir()) == [".grade", "exercises"]
    assert sorted(p.name for p in (work / "exercises").iterdir()) == ["03_jit.py"]
