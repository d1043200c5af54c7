"""Our results JSON: deterministic bytes, and exactly what the shipped schema describes."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest
from report_samples import sample_report

from grader.model import CheckResult, ExerciseResult, Report, SourceLine
from grader.reports import controls, json_report


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json_report.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_write_gives_to_json_back(report: Report, tmp_path: Any) -> None:
    path = json_report.write(report, tmp_path / "results.json")
    # What the submission printed is made visible (the sample's output holds NUL and ESC).
    assert json.loads(path.read_text(encoding="utf-8")) == controls.visible_in(report).to_json()
    assert "\x1b" not in path.read_text(encoding="utf-8")


def test_bytes_are_deterministic(report: Report) -> None:
    text = json_report.render(report)
    assert text == json_report.render(sample_report())
    assert text.endswith("}\n")
    assert text.startswith('{\n  "duration_s"')  # sorted keys, indent 2
    shown = controls.visible_in(report).to_json()
    assert text == json.dumps(shown, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def test_document_validates(report: Report, validator: jsonschema.Draft202012Validator) -> None:
    validator.validate(json_report.document(report))


def test_empty_report_validates(validator: jsonschema.Draft202012Validator) -> None:
    empty = Report(exercises=(), seed=0, submission=".", grader_version="0.1.0")
    validator.validate(json_report.document(empty))


def test_schema_is_shipped_in_the_package() -> None:
    assert resources.files("grader").joinpath(json_report.SCHEMA_FILE).is_file()
    assert json_report.schema()["properties"]["schema_version"] == {"const": 1}


def _keys(schema: dict[str, Any], name: str) -> set[str]:
    return set(schema["$defs"][name]["properties"])


def test_schema_describes_exactly_the_emitted_keys(report: Report) -> None:
    schema = json_report.schema()
    doc = report.to_json()
    exercise = doc["exercises"][1]
    check = exercise["checks"][1]
    assert set(schema["properties"]) == set(doc)
    assert _keys(schema, "exercise") == set(exercise)
    assert _keys(schema, "check") == set(check)
    assert _keys(schema, "source_line") == set(check["location"])
    assert _keys(schema, "artifact") == set(doc["exercises"][-1]["artifacts"][0])
    assert _keys(schema, "isolation") == set(doc["isolation"])


def test_schema_statuses_are_the_models() -> None:
    from grader.model import CHECK_STATUSES, EXERCISE_STATUSES

    schema = json_report.schema()
    assert schema["$defs"]["exercise"]["properties"]["status"]["enum"] == list(EXERCISE_STATUSES)
    assert schema["$defs"]["check"]["properties"]["status"]["enum"] == list(CHECK_STATUSES)


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


_DELETE = object()

BROKEN = [
    (("schema_version",), 2),
    (("seed",), "1234"),
    (("exercises", 0, "status"), "partial"),
    (("exercises", 1, "checks", 1, "status"), "ok"),
    (("exercises", 1, "checks", 1, "visibility"), "secret"),
    (("exercises", 1, "checks", 1, "hint"), _DELETE),
    (("exercises", 1, "checks", 1, "location", "line"), 0),
    (("exercises", 1, "checks", 0, "surprise"), 1),
    (("exercises", 0, "score"), -1),
    (("score",), _DELETE),
]


@pytest.mark.parametrize(("path", "value"), BROKEN, ids=[str(p) for p, _ in BROKEN])
def test_schema_rejects_broken_documents(
    report: Report, validator: jsonschema.Draft202012Validator, path: tuple[Any, ...], value: Any
) -> None:
    broken = _set(report.to_json(), path, value)
    assert not validator.is_valid(broken)


def test_non_finite_metric_is_written_as_null(validator: jsonschema.Draft202012Validator) -> None:
    check = CheckResult(
        name="speedup is measured",
        id="test_speedup",
        status="passed",
        score=1.0,
        max_score=1.0,
        visibility="public",
        message="",
        hint="",
        location=SourceLine(path="ex4.py", line=3, code="x = 1"),
    )
    exercise = ExerciseResult(
        name="ex4", title="t", status="passed", checks=(check,), metrics=(("ratio", float("nan")),)
    )
    report = Report(exercises=(exercise,), seed=1, submission=".", grader_version="0.1.0")
    text = json_report.render(report)
    assert "NaN" not in text
    doc = json.loads(text)
    assert doc["exercises"][0]["metrics"] == {"ratio": None}
    validator.validate(doc)


def test_from_json_reads_back_what_to_json_wrote() -> None:
    """`Report.from_json` is the one reader of our results JSON: it rebuilds the model
    (images without their bytes, which the JSON does not hold)."""
    report = sample_report()
    doc = json.loads(json_report.render(report))
    again = Report.from_json(doc)
    assert again.to_json() == {
        **doc,
        "exercises": [
            {**e, "artifacts": [{**a, "bytes": 0} for a in e["artifacts"]]}
            for e in doc["exercises"]
        ],
    }
    assert again.exercises[0].checks[0].location == report.exercises[0].checks[0].location


def test_from_json_is_lenient() -> None:
    """A malformed document still reads: defaults for what is missing, `error` for an
    unknown status."""
    report = Report.from_json(
        {
            "exercises": [
                {"name": "03_jit", "status": "exploded", "checks": [{"id": "t", "score": "x"}]}
            ]
        }
    )
    exercise = report.exercises[0]
    assert (exercise.status, exercise.checks[0].status, exercise.checks[0].score) == (
        "error",
        "error",
        0.0,
    )
    assert exercise.checks[0].name == "t" and report.isolation is None
