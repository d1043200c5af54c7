"""The isolation levels, as data every layer may name (the model, the protocol, the
reports); what each level does to a process is `grader.sandbox.isolation`'s."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Level = Literal["strict", "user", "basic"]
LEVELS: tuple[Level, ...] = ("basic", "user", "strict")  # weakest first


@dataclass(frozen=True)
class Isolation:
    """What was in force for a run, and what was missing (shown in every report)."""

    level: Level
    missing: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, object]:
        return {"level": self.level, "missing": list(self.missing)}
