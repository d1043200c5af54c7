"""A mutation campaign (`grade mutate`): the mutants of the reference solutions chosen,
then graded, each file's unmutated solution first (its baseline).

`plan` generates every lesson file's mutants and picks the ones to grade (`--limit`,
`--ids`, the equivalent ones left out); `grade` grades the baselines, then the mutants
of every file whose baseline scores full marks, filling in each file's
`report.FileSummary`; `run` is the whole campaign, as `grade mutate` asks for it
(`grader/commands/mutate.py` declares the arguments and prints).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from grader import grading
from grader.catalog import ExerciseSpec
from grader.errors import GraderError
from grader.mutate import equivalent, generate, operators, report
from grader.mutate.grade_mutants import Outcome, Pool, Settings, Task, elapsed
from grader.runner import policy


class CampaignError(GraderError):
    """What was asked for does not exist (an operator, a mutant id); the message says what
    is known."""


def operators_named(text: str) -> tuple[operators.Operator, ...]:
    """The operators `text` names (`name,name`; every operator when empty)."""
    if not text:
        return operators.OPERATORS
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in operators.BY_NAME]
    if unknown:
        raise CampaignError(
            f"--operators: no operator named {', '.join(unknown)}. "
            f"Known: {', '.join(operators.BY_NAME)}"
        )
    return tuple(operators.BY_NAME[n] for n in names)


def plan(
    specs: Sequence[ExerciseSpec],
    solutions: Path,
    ops: tuple[operators.Operator, ...],
    listed: Mapping[str, Mapping[str, str]],
    *,
    wanted: Sequence[str] = (),
    limit: int | None = None,
) -> tuple[list[report.FileSummary], list[Task]]:
    """Each lesson file's summary (its mutants chosen, the equivalent ones named, a file
    that cannot be mutated with its problem) and the mutants to grade. `wanted`: only the
    mutants with these ids (`CampaignError` naming those not found); `listed`: the
    equivalent mutants, lesson -> id -> reason."""
    summaries: list[report.FileSummary] = []
    tasks: list[Task] = []
    for spec in specs:
        path = solutions / spec.filename
        summary = report.FileSummary(spec.name)
        summaries.append(summary)
        if not path.is_file():
            summary.problem = f"{path} is missing"
            continue
        try:
            every = generate.generate(path.read_text(encoding="utf-8"), spec.name, ops)
        except Exception as exc:  # libcst's ParserSyntaxError and kin
            summary.problem = f"{path} could not be parsed: {exc}"
            continue
        summary.generated = len(every)
        picked = [m for m in every if m.id in wanted] if wanted else every
        chosen = generate.select(picked, limit)
        known = listed.get(spec.name, {})
        summary.stale = equivalent.stale(known, (m.id for m in every))
        summary.mutants = chosen
        summary.equivalent = [m.id for m in chosen if m.id in known]
        tasks += [(spec, m) for m in chosen if m.id not in known]
    if wanted:
        found = {m.id for s in summaries for m in s.mutants}
        missing = [i for i in wanted if i not in found]
        if missing:
            raise CampaignError(
                f"--ids: no mutant {', '.join(missing)} among the chosen files and operators "
                "(`grade mutate --list --only NAME` shows the ids)"
            )
    return summaries, tasks


def grade(
    summaries: Sequence[report.FileSummary],
    tasks: Sequence[Task],
    solutions: Path,
    specs: Sequence[ExerciseSpec],
    settings: Settings,
    jobs: int,
    say: Callable[[str], None] = lambda text: None,
    start: float | None = None,
) -> None:
    """Grade, `jobs` at once on warm workers (`run.Pool`), each file's baseline, then the
    mutants of the files whose baseline scores full marks; the outcomes go into
    `summaries`, and every line of progress to `say`."""
    start = time.monotonic() if start is None else start
    by_name = {s.name: s for s in summaries}
    to_grade = {spec.name for spec, _ in tasks}
    pool = Pool(solutions, specs, settings, jobs)
    kept = list(tasks)
    done = [0]

    def progress(task: Task, outcome: Outcome) -> None:
        graded_spec, graded = task
        if graded is None:
            return
        done[0] += 1
        verdict = f"killed by {outcome.by}" if outcome.killed else "SURVIVED"
        say(
            f"[{done[0]}/{len(kept)} {elapsed(start)}] {graded_spec.name} {graded.id}: {verdict} "
            f"({outcome.duration_s:.1f} s)"
        )

    try:
        baseline_specs = [s for s in specs if s.name in to_grade]
        for spec, outcome in zip(
            baseline_specs, pool.run([(s, None) for s in baseline_specs]), strict=True
        ):
            summary = by_name[spec.name]
            summary.baseline = outcome
            if outcome.status == "skipped":
                summary.problem = "skipped: the suite's requirements are not installed"
            elif outcome.killed:
                summary.problem = (
                    f"the unmutated solution scores {outcome.score:g}/{outcome.max_score:g} "
                    f"({outcome.status}, first: {outcome.by}): fix it before measuring"
                )
            else:
                pool.set_timeout(spec, outcome)
            say(
                f"baseline {spec.name}: {outcome.score:g}/{outcome.max_score:g} "
                f"in {outcome.duration_s:.1f} s"
                + (f" -- {summary.problem}" if summary.problem else "")
            )
        kept = [(spec, m) for spec, m in tasks if not by_name[spec.name].problem]
        for (spec, graded), outcome in zip(kept, pool.run(kept, progress), strict=True):
            assert graded is not None
            by_name[spec.name].outcomes[graded.id] = outcome
    finally:
        pool.close()


@dataclass(frozen=True)
class Request:
    """What `grade mutate` asks for: `options.jobs` mutants graded at once."""

    specs: Sequence[ExerciseSpec]
    solutions: Path
    options: policy.Options
    equivalent: Path = equivalent.DEFAULT
    operators: str = ""  # names, comma-separated; "" for all
    ids: Sequence[str] = ()  # only these mutants
    limit: int | None = None  # mutants per file
    list_only: bool = False  # choose the mutants, grade none
    json: Path | None = None  # where the JSON report goes


@dataclass
class Campaign:
    """A campaign's files (`report.FileSummary`) and how it ran."""

    summaries: list[report.FileSummary]
    level: str = ""  # the isolation it graded at ("" when nothing was graded)
    took: str = ""  # the time it took (`run.elapsed`)


def run(
    request: Request,
    say: Callable[[str], None] = lambda text: None,
    warn: Callable[[str], None] = lambda text: None,
) -> Campaign:
    """Plan the campaign (`CampaignError` for what does not exist), say its outdated
    equivalent entries to `warn`; unless `list_only`, grade it (`policy.IsolationUnavailable`
    when the machine cannot), progress to `say`, and write the JSON report."""
    try:
        listed = equivalent.load(request.equivalent)
    except equivalent.EquivalentFileError as exc:
        raise CampaignError(f"the equivalent-mutants file is malformed: {exc}") from None
    ops = operators_named(request.operators)
    summaries, tasks = plan(
        request.specs, request.solutions, ops, listed, wanted=request.ids, limit=request.limit
    )
    for summary in summaries:
        for stale_id in summary.stale:
            warn(
                "stale entry in the equivalent-mutants file: "
                f"[{summary.name}] {stale_id!r} is no longer generated"
            )
    if request.list_only:
        return Campaign(summaries)
    options, jobs = request.options, request.options.jobs
    level = grading.isolation(options).level
    start = time.monotonic()
    say(
        f"Mutating {len(request.specs)} lesson file(s) in {request.solutions}: {len(tasks)} "
        f"mutant(s) to grade ({jobs} job(s), isolation {level}) ..."
    )
    settings = Settings(options, level)
    grade(summaries, tasks, request.solutions, request.specs, settings, jobs, say, start)
    took = elapsed(start)
    if request.json is not None:
        doc = report.document(
            summaries,
            {
                "limit": request.limit,
                "seed": options.seed,
                "jobs": jobs,
                "isolation": level,
                "operators": [op.name for op in ops],
            },
        )
        request.json.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return Campaign(summaries, level, took)


__all__ = [
    "Campaign",
    "CampaignError",
    "Request",
    "Settings",
    "grade",
    "operators_named",
    "plan",
    "run",
]
