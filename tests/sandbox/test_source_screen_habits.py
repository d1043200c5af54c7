"""A correct lesson file written with everyday habits grades at full marks.

The source screen (`grader.sandbox.source_screen`) refuses only what can reach the probes or the
grader: `from __future__ import annotations`, type hints, dataclasses, a small class that
sets its attributes by name, `inspect.signature`, `importlib.util.find_spec`, logging,
`print(..., file=sys.stderr)` and a `__main__` demo with `traceback.print_exc()` cost
nothing. Graded as users grade (`grade --json` on a folder in tmp_path), next to the same
file with one tampering construct added, which loses exactly its observed checks and
none to a gate that would call the values wrong.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HABITS_06 = '''"""06 - explicit PRNG keys, written with everyday habits."""

from __future__ import annotations

import importlib.util
import inspect
import logging
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp

log = logging.getLogger(__name__)
HAS_FLAX = importlib.util.find_spec("flax") is not None


@dataclass(frozen=True)
class Draw:
    """How one array is drawn."""

    shape: tuple[int, ...]
    scale: float = 1.0
    tags: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))


class Options:
    """Settings given by name."""

    def __init__(self, **given: float) -> None:
        for name, value in given.items():
            setattr(self, name, value)

    def get(self, name: str, default: float) -> float:
        return float(getattr(self, name, default))


OPTIONS = Options(scale=1.0)


def split_into(key: jax.Array, n: int) -> jax.Array:
    """`n` independent subkeys of `key`."""
    return jax.random.split(key, n)


def init_weights(key: jax.Array, shapes: Sequence[tuple[int, ...]]) -> list[jax.Array]:
    """One standard normal array per shape, each from its own subkey."""
    draws = [Draw(tuple(s), OPTIONS.get("scale", 1.0)) for s in shapes]
    keys = split_into(key, len(draws))
    return [d.scale * jax.random.normal(k, d.shape) for k, d in zip(keys, draws)]


def noisy(key: jax.Array, x: jax.Array, sigma: float) -> jax.Array:
    """`x + sigma * noise`, the noise standard normal and shaped like `x`."""
    x = jnp.asarray(x)
    return x + sigma * jax.random.normal(key, jnp.shape(x))


ARITY = {fn.__name__: len(inspect.signature(fn).parameters) for fn in (split_into, noisy)}
log.debug("arity %s; flax installed: %s", ARITY, HAS_FLAX)
print(f"{__name__}: {sorted(Draw.__dataclass_fields__)}", file=sys.stderr)


if __name__ == "__main__":
    try:
        print(init_weights(jax.random.key(0), [(2, 3)]), file=sys.stderr)
    except Exception:
        traceback.print_exc()
        sys.exit(1)
'''

TAMPERING_LINE = "import threading  # reaches the probes: threads run beside them\n"


def grade(folder: Path, *lessons: tuple[str, str]) -> dict[str, Any]:
    """Grade the lesson files `(name, source)` in `folder` with the `grade` CLI."""
    folder.mkdir()
    for name, source in lessons:
        (folder / f"{name}.py").write_text(source)
    out = folder.parent / f"{folder.name}.json"
    command = [sys.executable, "-m", "grader", str(folder), "--json", str(out), "--no-html"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=folder.parent)
    assert out.exists(), done.stdout[-2000:] + done.stderr[-2000:]
    return {e["name"]: e for e in json.loads(out.read_text())["exercises"]}


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("habits")
    lines = HABITS_06.splitlines(keepends=True)
    at = lines.index("import jax\n")
    tampering = "".join([*lines[:at], TAMPERING_LINE, *lines[at:]])
    return {
        "habits": grade(root / "habits", ("06_random", HABITS_06))["06_random"],
        "tampering": grade(root / "tampering", ("06_random", tampering))["06_random"],
    }


def test_everyday_habits_cost_nothing(graded: dict[str, dict[str, Any]]) -> None:
    lesson = graded["habits"]
    failing = {c["id"]: c["message"] for c in lesson["checks"] if c["status"] != "passed"}
    assert failing == {}
    assert lesson["score"] == lesson["max_score"]


def test_a_tampering_construct_costs_only_its_observed_checks(
    graded: dict[str, dict[str, Any]],
) -> None:
    honest = {c["id"]: c for c in graded["habits"]["checks"]}
    lesson = graded["tampering"]
    line = HABITS_06.splitlines().index("import jax") + 1
    lost = [c for c in lesson["checks"] if c["status"] != "passed"]
    assert lost, "the construct must withhold credit from the observed checks"
    for c in lost:
        assert f"line {line}: starts threads (`threading`)" in c["message"], c["message"]
        assert "values are wrong" not in c["message"]
    kept = [c for c in lesson["checks"] if c["status"] == "passed"]
    assert kept, "the values are still judged, in the grader"
    assert lesson["score"] == lesson["max_score"] - sum(honest[c["id"]]["max_score"] for c in lost)
