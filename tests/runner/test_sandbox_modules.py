"""What the sandbox holds of the grader when it imports the student's module.

The sandbox is a fork of the judge, itself a fork of the warm worker, taken before the
hidden suite is imported (`grader.sandbox.launch`). So its `sys.modules` is:

- what the worker preloaded (`grader.runner.worker.preload`): JAX, pytest,
  `grader.plugin` (every module of the package), the suites' own top-level imports
  (`grader.authoring`, `grader.data`; not `grader.checks` nor `grader.suites._shared`,
  which `grader.runner.engine.preload_for` leaves to the judge), and every module of
  `grader.probes`, the code the sandbox runs;
- what the judge imported to start it: `grader.runner.child`, `grader.sandbox.launch`
  and, through `grader.sandbox.probes.load_all`, the probes and the public inputs
  (`grader.inputs`, `grader.sandbox.public_inputs`).

Nothing of `grader.checks` or `grader.suites` is there: the plugin and the suites take the
failure they raise from `grader.protocol.failure`, and the check kinds (values, jit,
exported, diagnose, ...) are imported by the judge with its suite, after the fork.

Student code can reach all of those; what it must not find there is a hidden suite (its
references and expected values: imported by the judge after the fork), a check kind's
module, or anything of the parent's side (scheduling, policy, reports, commands).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader import catalog
from grader.runner import engine, handle, policy
from grader.runner.submission import find

SUBMISSIONS = Path(__file__).parent / "submissions"

INHERITED = (
    "grader",
    "grader.authoring",
    "grader.data",
    "grader.explain",
    "grader.inputs",
    "grader.isolation_levels",
    "grader.model",
    "grader.plugin",
    "grader.probes",
    "grader.protocol",
    "grader.runner",
    "grader.runner.budget",
    "grader.runner.child",
    "grader.runner.worker",
    "grader.sandbox",
    "grader.version",  # the package root's __version__: a constant
)
"""What a sandbox may hold of the grader: these modules and, for the packages among
`grader.inputs`, `grader.plugin`, `grader.probes`, `grader.protocol` and `grader.sandbox`,
any module in them."""
WHOLE_PACKAGES = (
    "grader.inputs",
    "grader.plugin",
    "grader.probes",
    "grader.protocol",
    "grader.sandbox",
)


def _allowed(name: str) -> bool:
    return name in INHERITED or name.startswith(tuple(f"{p}." for p in WHOLE_PACKAGES))


@pytest.mark.slow
def test_the_sandbox_holds_no_suite_and_nothing_of_the_parents_side(tmp_path: Path) -> None:
    spec = next(s for s in catalog.exercises(SUBMISSIONS / "modules_suites") if s.name == "modules")
    # Preloaded as for a real lesson: every suite's imports.
    preload = engine.preload_for([*catalog.exercises(), spec])
    worker: handle.WorkerHandle | None = handle.WorkerHandle(tmp_path, preload)
    try:
        result, worker = engine.grade_one(
            worker,
            spec,
            find(SUBMISSIONS / "modules", ["modules"]),
            policy.Options(timeout_s=120),
            "basic",
            tmp_path / "graded",
            preload,
        )
    finally:
        if worker is not None:
            worker.close()
    assert result.status == "passed", result
    written = tmp_path / "graded" / "modules" / "cwd" / "sandbox_modules.json"
    loaded: list[str] = json.loads(written.read_text(encoding="utf-8"))
    assert "grader.sandbox.server" in loaded  # it is the sandbox's list
    hidden = {spec.suite.stem, *(s.suite.stem for s in catalog.exercises())}
    suites = [m for m in loaded if m.rpartition(".")[2] in hidden]
    assert suites == [], f"the sandbox holds a hidden suite: {suites}"
    grader_side = [m for m in loaded if m.partition(".")[0] == "grader" and not _allowed(m)]
    assert grader_side == [], (
        f"the sandbox holds modules of the judge's or parent's side: {grader_side}"
    )
    for parent_side in ("grader.runner.engine", "grader.runner.cache", "grader.catalog"):
        assert parent_side not in loaded
    checks = [m for m in loaded if m.startswith(("grader.checks", "grader.suites"))]
    assert checks == [], f"the sandbox holds the judge's checks or suite helpers: {checks}"
    assert "grader.probes.traces" in loaded  # what it runs is there
