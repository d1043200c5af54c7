"""The class's misconceptions: failures grouped by check and cause, work not started apart."""

from __future__ import annotations

from typing import Any

from grader.classroom import misconceptions

UNROLLED = (
    "likely cause: a Python loop unrolled while tracing: the same operations repeat (up to x{n})"
)


def check(cid: str, status: str = "failed", message: str = "", **extra: Any) -> dict[str, Any]:
    return {"id": cid, "name": f"check {cid}", "status": status, "message": message,
            "visibility": "public", "root_cause": None, "blocked_by": None, **extra}  # fmt: skip


def doc(*exercises: tuple[str, str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"exercises": [{"name": n, "status": s, "checks": c} for n, s, c in exercises]}


def scan_failure(n: int) -> dict[str, Any]:
    return check(
        "scan", message=f"the jaxpr of running_sum(xs) contains `scan`\n  {UNROLLED.format(n=n)}"
    )


CLASS = [
    ("ann", doc(("03_jit", "failed", [scan_failure(8), check("values", "passed")]))),
    ("ben", doc(("03_jit", "failed", [scan_failure(32), check("values", "passed")]))),
    ("cy", doc(("03_jit", "failed", [
        check("scan", message="the jaxpr ...\n  likely cause: the carry is a Python list"),
        check("values", root_cause="TypeError|03_jit.py|12|running_sum"),
        check("jit", blocked_by="values"),  # waits for values: not a cause of its own
    ]))),
    ("dee", doc(("03_jit", "failed", [
        check("values", root_cause="TypeError|03_jit.py|19|running_sum"),  # another line
        check("scan", message="`running_sum` is not implemented yet: it still raises NotImplementedError."),
        check("pure", message="this property ...\n  likely cause: values are wrong: fix the values first: see 'x'"),
    ]))),
    ("eve", doc(("03_jit", "not_attempted", [check("scan"), check("values")]))),
    ("fay", doc(("03_jit", "error", [check("values", "timeout")]))),
]  # fmt: skip


def test_failures_are_grouped_by_check_and_cause_most_common_first() -> None:
    found = misconceptions.of_class(CLASS)
    summary = [(m.count, m.check_id, m.cause, m.students) for m in found.misconceptions]
    assert summary == [
        (2, "scan", UNROLLED.format(n=8).removeprefix("likely cause: "), ["ann", "ben"]),
        (2, "values", "raised TypeError in running_sum", ["cy", "dee"]),
        (1, "scan", "the carry is a Python list", ["cy"]),
        (1, "values", "ran out of time", ["fay"]),
    ]


def test_work_not_started_is_counted_apart_from_failures() -> None:
    found = misconceptions.of_class(CLASS)
    assert found.not_attempted == (misconceptions.NotAttempted("03_jit", ("eve",), ("dee",)),)
    assert all("eve" not in m.students for m in found.misconceptions)


def test_causes_in_words() -> None:
    assert misconceptions.cause_of(check("x")) == "wrong values"
    assert misconceptions.cause_of(check("x", "error")) == "raised an error"
    assert (
        misconceptions.cause_of(check("x", root_cause="ValueError|a.py|3|<module>"))
        == "raised ValueError"
    )
