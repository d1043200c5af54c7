"""`grade ci-template`: a GitHub Actions workflow that grades, uploads the report, fails below a threshold."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from grader import cli
from grader.course import ci_template, lock

yaml = pytest.importorskip("yaml")
Grade = Callable[..., tuple[int, str]]


def steps(text: str) -> dict[str, dict[str, Any]]:
    doc = yaml.safe_load(text)
    assert set(doc[True]) == {
        "push",
        "pull_request",
        "workflow_dispatch",
    }  # YAML 1.1 reads `on` as True
    return {s.get("name", s.get("uses", "")): s for s in doc["jobs"]["grade"]["steps"]}


def test_workflow_installs_grades_uploads_and_fails_under_the_threshold() -> None:
    found = steps(ci_template.workflow(fail_under=75, path="exercises", python="3.12"))
    assert found["actions/setup-python@v5"]["with"]["python-version"] == "3.12"
    install = found["Install the grader (every package pinned in requirements.lock)"]["run"]
    assert install.splitlines() == [
        "python -m pip install --no-deps -r requirements.lock",  # nothing resolved on the runner
        "python -m pip install --no-deps --no-build-isolation .",
        "python -m pip check",
    ]
    argv = shlex.split(found["Grade exercises"]["run"])
    assert argv[0] == "grade"
    args = cli.grade_parser().parse_args(argv[1:])  # the command line is valid for this grader
    assert (args.path, args.fail_under, args.html, args.json, args.junit) == (
        "exercises",
        75.0,
        "grade-report.html",
        "results.json",
        "junit.xml",
    )
    upload = found["Upload the report"]
    assert upload["if"] == "always()" and upload["uses"].startswith("actions/upload-artifact@")
    assert "grade-report.html" in upload["with"]["path"]


def test_job_summary_script_reads_the_results(tmp_path: Path) -> None:
    script = steps(ci_template.workflow())["Score in the job summary"]["run"]
    summary = tmp_path / "summary.md"
    (tmp_path / "results.json").write_text(
        json.dumps(
            {
                "score": 7.5,
                "max_score": 10,
                "exercises": [
                    {"name": "03_jit", "status": "failed", "score": 7.5, "max_score": 10}
                ],
            }
        )
    )
    path = f"{Path(sys.executable).parent}:/usr/bin:/bin"  # `python` is the runner's Python
    subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        check=True,
        timeout=60,
        env={"GITHUB_STEP_SUMMARY": str(summary), "PATH": path},
    )
    text = summary.read_text()
    assert "### Score 7.5 / 10" in text and "| 03_jit | failed | 7.5 / 10 |" in text


def test_command_writes_the_workflow_and_refuses_to_overwrite(tmp_path: Path, grade: Grade) -> None:
    out = tmp_path / ".github" / "workflows" / "grade.yml"
    code, text = grade("ci-template", "--out", str(out), "--fail-under", "80")
    assert code == 0 and "fails below 80%" in text
    assert "--fail-under 80" in out.read_text()
    # the lock it installs from, made from this environment, beside .github/
    pins = lock.read(tmp_path / lock.LOCK_FILE).pins
    assert f"wrote {tmp_path / lock.LOCK_FILE} ({len(pins)} packages pinned)" in text
    assert pins["jax"] == metadata.version("jax") and pins["flax"] == metadata.version("flax")
    python = steps(out.read_text())["actions/setup-python@v5"]["with"]["python-version"]
    assert python == lock.python_version()
    code, text = grade("ci-template", "--out", str(out))
    assert code == 2 and "--force" in text
    assert grade("ci-template", "--out", str(out), "--force")[0] == 0
    code, text = grade("ci-template", "--out", "-")
    assert code == 0 and text.startswith("# Grades every push")


def test_a_committed_lock_is_kept_and_its_python_used(tmp_path: Path, grade: Grade) -> None:
    committed = "# python: 3.12\njax==0.4.30\n"
    (tmp_path / lock.LOCK_FILE).write_text(committed)
    code, text = grade("ci-template", "--course", str(tmp_path))
    assert code == 0 and "installs from the course's" in text, text
    assert (tmp_path / lock.LOCK_FILE).read_text() == committed
    workflow = (tmp_path / ".github" / "workflows" / "grade.yml").read_text()
    assert steps(workflow)["actions/setup-python@v5"]["with"]["python-version"] == "3.12"
    (tmp_path / lock.LOCK_FILE).write_text("# python: 3.12\njax>=0.4.30\n")  # not pinned
    code, text = grade("ci-template", "--course", str(tmp_path), "--force")
    assert code == 2 and "not pinned (name==version): jax>=0.4.30" in text


def test_a_lock_of_what_the_environment_lacks_is_refused(tmp_path: Path, grade: Grade) -> None:
    code, text = grade("ci-template", "--course", str(tmp_path), "--extras", "gpu")
    assert code == 2 and "no extra named gpu" in text
    assert not (tmp_path / lock.LOCK_FILE).exists() and not (tmp_path / ".github").exists()
