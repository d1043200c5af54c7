"""A mutation campaign (`grade mutate`): the mutants of the reference solutions chosen,
then graded, each file's unmutated solution first (its baseline).

`plan` generates every lesson file's mutants and picks the ones to grade (`--limit`,
`--ids`, the equivalent ones left out); `grade` grades the baselines, then the mutants
of every file whose baseline scores full marks, filling in each file's
`report.FileSummary`. `grader/commands/mutate.py` declares the arguments and prints.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from grader.catalog import ExerciseSpec
from grader.mutate import equivalent, generate, operators, report
from grader.mutate.run import Outcome, Pool, Settings, Task, elapsed


class CampaignError(Exception):
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


__all__ = ["CampaignError", "Settings", "grade", "operators_named", "plan"]
