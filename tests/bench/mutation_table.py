"""Print the kill-rate table of one or more `grade mutate --json` reports (markdown).

    python tests/bench/mutation_table.py docs/measurements/mutate-2026-12-05-*.json

A file measured in several reports takes its row from the last one given. Not a test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(paths: list[str]) -> None:
    rows: dict[str, dict[str, object]] = {}
    for path in paths:
        for name, row in json.loads(Path(path).read_text())["files"].items():
            rows[name] = {**row, "source": Path(path).name}
    print("| file | mutants | killed | equivalent | survivors | kill rate | report |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for name in sorted(rows):
        r = rows[name]
        survivors = len(r["survivors"])  # type: ignore[arg-type]
        rate = f"{100 * float(r['kill_rate']):.0f}%"  # type: ignore[arg-type]
        print(
            f"| {name} | {r['mutants']} | {r['killed']} | {r['equivalent']} | {survivors} "
            f"| {rate} | {r['source']} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
