"""How many gradings this machine runs at once: one per CPU this process may use,
fewer when the memory available would not hold that many grading processes.

`grade`, `grade batch`, `grade verify` and `grade mutate` take `--jobs N`; left out,
`auto_jobs` decides from `cpus()` and `available_memory()`. A module of its own at the
package's top: `grade` and `grade watch` ship to students, the batch package does not.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Jobs:
    """How many gradings run at once, and why that many ("" when --jobs gave it)."""

    count: int
    why: str = ""


def cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def available_memory(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """Bytes of memory available to new processes (MemAvailable), None where unknown."""
    try:
        text = meminfo.read_text(encoding="ascii")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "MemAvailable":
            return int(value.split()[0]) * 1024  # "23540468 kB"
    return None


def auto_jobs(memory_gib: float, *, cpus: int, available: int | None) -> Jobs:
    """One grading per CPU, as many as `available` bytes hold at `memory_gib` GiB each."""
    why = f"{cpus} CPU{'s' if cpus != 1 else ''}"
    if available is None:
        return Jobs(cpus, why)
    fit = int(available // (memory_gib * 2**30))
    if fit >= cpus:
        return Jobs(cpus, why)
    return Jobs(
        max(1, fit),
        f"{why}, but {available / 2**30:.1f} GiB of memory available "
        f"at --memory {memory_gib:g} GiB per job",
    )


def jobs(given: int | None, memory_gib: float) -> Jobs:
    """The count `given` (`--jobs`), or the automatic one for `memory_gib` GiB a grading."""
    if given is not None:
        return Jobs(given)
    return auto_jobs(memory_gib, cpus=cpus(), available=available_memory())
