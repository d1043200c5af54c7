"""What `grade mutate` reports: per lesson file, mutants, killed, equivalent, survivors.

    kill rate = killed / (mutants - equivalent)

`document(...)` is the JSON (`{"files": {NAME: {"mutants": N, "killed": K,
"equivalent": E, "survivors": [{"id", "operator", "function", "line", "diff"}], ...}}}`)
and `table(...)` the table printed at the end (and pasted into the README).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from grader.mutate.generate import Mutant
from grader.mutate.grade_mutants import Outcome


@dataclass
class FileSummary:
    name: str
    generated: int = 0  # every mutant the operators made
    mutants: list[Mutant] = field(default_factory=list)  # the ones selected (--limit)
    equivalent: list[str] = field(default_factory=list)  # selected and listed as equivalent
    outcomes: dict[str, Outcome] = field(default_factory=dict)  # mutant id -> how it ended
    stale: list[str] = field(default_factory=list)  # listed ids no longer generated
    baseline: Outcome | None = None
    problem: str = ""  # why the file's mutants were not graded

    @property
    def killed(self) -> list[Mutant]:
        return [m for m in self.mutants if m.id in self.outcomes and self.outcomes[m.id].killed]

    @property
    def survivors(self) -> list[Mutant]:
        return [m for m in self.mutants if m.id in self.outcomes and not self.outcomes[m.id].killed]

    @property
    def graded(self) -> int:
        return len(self.mutants) - len(self.equivalent)

    @property
    def kill_rate(self) -> float | None:
        return len(self.killed) / self.graded if self.graded and not self.problem else None


def _mutant_json(mutant: Mutant, outcome: Outcome | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": mutant.id,
        "operator": mutant.operator,
        "function": mutant.function,
        "line": mutant.line,
    }
    if outcome is not None:
        doc["by"] = outcome.by
        doc["status"] = outcome.status
    else:
        doc["diff"] = mutant.diff
    return doc


def document(summaries: list[FileSummary], settings: dict[str, Any]) -> dict[str, Any]:
    files: dict[str, Any] = {}
    for s in summaries:
        rate = s.kill_rate
        files[s.name] = {
            "mutants": len(s.mutants),
            "killed": len(s.killed),
            "equivalent": len(s.equivalent),
            "kill_rate": None if rate is None else round(rate, 4),
            "generated": s.generated,
            "survivors": [_mutant_json(m) for m in s.survivors],
            "killed_mutants": [_mutant_json(m, s.outcomes[m.id]) for m in s.killed],
            "equivalent_ids": s.equivalent,
            "stale_equivalent": s.stale,
            "baseline": None
            if s.baseline is None
            else {
                "score": s.baseline.score,
                "max_score": s.baseline.max_score,
                "duration_s": round(s.baseline.duration_s, 1),
            },
            "problem": s.problem,
        }
    return {"settings": settings, "files": files}


def _rate(rate: float | None) -> str:
    return "-" if rate is None else f"{rate * 100:.0f}%"


def table(summaries: list[FileSummary]) -> str:
    """A Markdown table: file, mutants, killed, equivalent, survivors, kill rate; a total."""
    rows = [
        "| file | mutants | killed | equivalent | survivors | kill rate |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in summaries:
        rate = _rate(s.kill_rate) if not s.problem else "not graded"
        rows.append(
            f"| {s.name} | {len(s.mutants)} | {len(s.killed)} | {len(s.equivalent)} | "
            f"{len(s.survivors)} | {rate} |"
        )
    graded = [s for s in summaries if not s.problem]
    mutants = sum(len(s.mutants) for s in graded)
    killed = sum(len(s.killed) for s in graded)
    equivalent = sum(len(s.equivalent) for s in graded)
    survivors = sum(len(s.survivors) for s in graded)
    total = killed / (mutants - equivalent) if mutants - equivalent else None
    rows.append(f"| **all** | {mutants} | {killed} | {equivalent} | {survivors} | {_rate(total)} |")
    return "\n".join(rows) + "\n"


def survivors_text(summaries: list[FileSummary]) -> str:
    """Every survivor with its diff, file by file (what the suites do not see)."""
    parts = []
    for s in summaries:
        for mutant in s.survivors:
            parts.append(f"SURVIVED {s.name} {mutant.id} (line {mutant.line})\n{mutant.diff}")
    return "\n".join(parts)


def listing(summaries: list[FileSummary]) -> str:
    """`grade mutate --list`: every chosen mutant with its id, line and diff, file by file."""
    lines = []
    for s in summaries:
        for mutant in s.mutants:
            mark = " (equivalent)" if mutant.id in s.equivalent else ""
            lines.append(f"{s.name} {mutant.id} line {mutant.line}{mark}\n{mutant.diff}")
        lines.append(f"{s.name}: {len(s.mutants)} of {s.generated} mutants")
    return "".join(line + "\n" for line in lines)


def below(summaries: list[FileSummary], percent: float) -> list[str]:
    """The files whose kill rate is below `percent`, each said as `--fail-under` says it."""
    return [
        f"{s.name} kill rate {(s.kill_rate or 0.0) * 100:.1f}% is below --fail-under {percent:g}%"
        for s in summaries
        if s.kill_rate is not None and s.kill_rate * 100 < percent
    ]
