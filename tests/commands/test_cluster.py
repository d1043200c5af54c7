"""`grade batch --scheduler`: a real local dask.distributed cluster gives the local results."""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from grader import audience, catalog
from grader.batch import cluster, jobs
from grader.batch import pool as batch
from grader.model import without_timings
from grader.reports import json_report
from grader.runner import policy

Grade = Callable[..., tuple[int, str]]
STUDENTS = (
    "alice",
    "bob",
    "carol",
    "dave",
    "frank",
)  # right, wrong, syntax error, os._exit, no files

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1,
        processes=True,
        threads_per_worker=2,
        host="127.0.0.1",
        dashboard_address=None,
        silence_logs=40,
    ) as local:
        yield local.scheduler_address


def comparable(out: Path, name: str) -> Any:
    return without_timings(json.loads((out / "students" / f"{name}.json").read_text()))


def test_cluster_results_equal_local_results(
    course: Path, grade: Grade, scheduler: str, tmp_path: Path
) -> None:
    common = [str(course / "submissions"), "--suites", str(course / "suites"), "--timeout", "20"]
    picks = [a for s in STUDENTS for a in ("--student", s)]
    code, text = grade("batch", *common, "--out", str(tmp_path / "local"), "--jobs", "2", *picks)
    assert code == 0, text
    code, text = grade(
        "batch", *common, "--out", str(tmp_path / "dask"), "--scheduler", scheduler, *picks
    )
    assert code == 0, text
    assert "on the dask cluster at tcp://127.0.0.1:" in text
    for name in STUDENTS:
        assert comparable(tmp_path / "dask", name) == comparable(tmp_path / "local", name), name
    assert book(tmp_path / "dask") == book(tmp_path / "local")


def book(out: Path) -> list[list[str]]:
    """The gradebook without its time of grading (the results files' own times)."""
    rows = list(csv.reader(io.StringIO((out / "gradebook.csv").read_text())))
    at = rows[0].index("graded_at")
    return [row[:at] + row[at + 1 :] for row in rows]


def test_a_worker_without_the_files_grades_the_shipped_bytes(course: Path, tmp_path: Path) -> None:
    """As on a remote worker: the paths in the job do not exist there, the bytes travel."""
    specs = list(catalog.exercises(course / "suites"))
    options = policy.Options(timeout_s=20)
    job = batch.job_for(course / "submissions", "bob", [s.name for s in specs])
    parcel = cluster.pack(job, specs)
    here = jobs.grade_job(job, specs, options)
    shutil.rmtree(
        course / "submissions"
    )  # neither the lesson files nor the suites are here any more
    shutil.rmtree(course / "suites")
    # the batch applies the class's policy on fixes to every grader's report, as grade_job does
    remote = audience.for_class(cluster.grade_parcel(parcel, specs, options))
    assert without_timings(json_report.document(remote)) == without_timings(
        json_report.document(here)
    )
    started = cluster.warm_pool(specs).started
    again = audience.for_class(cluster.grade_parcel(parcel, specs, options))  # the warm worker
    assert cluster.warm_pool(specs).started == started >= 1
    assert without_timings(json_report.document(again)) == without_timings(
        json_report.document(here)
    )
    assert remote.submission == job.root and here.exercises[0].score == 5  # graded, not missing


def test_an_unreachable_scheduler_is_a_usage_error(
    course: Path, grade: Grade, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 2)
    code, text = grade(
        "batch",
        str(course / "submissions"),
        "--out",
        str(tmp_path / "o"),
        "--suites",
        str(course / "suites"),
        "--scheduler",
        "tcp://127.0.0.1:9",
        "--student",
        "alice",
    )
    assert code == 2 and "cannot reach the dask scheduler" in text
