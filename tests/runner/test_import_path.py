"""The grading processes import what `grade` imports: a JAX reached only through PYTHONPATH or
a `.pth` file (module systems on clusters, some containers) grades as one installed beside the
grader does. The worker runs isolated (`python -I`), so `grade` hands it its `sys.path`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import grader

ROOT = Path(__file__).resolve().parents[2]
LESSONS = "03_jit,06_random"

pytestmark = pytest.mark.slow


def bare_python(folder: Path) -> Path:
    """A venv with no package of its own: JAX, the grader and their dependencies are not in it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    probe = subprocess.run(
        [str(python), "-c", "import jax"], capture_output=True, text=True, env=_without_pythonpath()
    )
    assert probe.returncode != 0, "the bare venv must not see JAX on its own"
    return python


def _without_pythonpath() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _elsewhere() -> list[str]:
    """Where JAX and the grader are installed for this test run (one folder in CI)."""
    import jax

    found = [str(Path(jax.__file__).parent.parent), str(Path(grader.__file__).parent.parent)]
    return list(dict.fromkeys(found))


def _grade(python: Path, out: Path, env: dict[str, str]) -> dict:
    out.mkdir()
    done = subprocess.run(
        [
            str(python), "-m", "grader", str(ROOT / "solutions"), "--only", LESSONS,
            "--json", str(out / "r.json"), "--no-html", "--no-color",
        ],
        capture_output=True, text=True, cwd=out, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    doc: dict = json.loads((out / "r.json").read_text())
    return doc


def _full_marks(doc: dict) -> None:
    for exercise in doc["exercises"]:
        assert exercise["score"] == exercise["max_score"] > 0, (
            exercise["name"],
            exercise["message"][:2000],
        )


def test_a_jax_on_pythonpath_grades_at_full_marks(tmp_path: Path) -> None:
    python = bare_python(tmp_path / "venv")
    env = {**_without_pythonpath(), "PYTHONPATH": os.pathsep.join(_elsewhere())}
    _full_marks(_grade(python, tmp_path / "out", env))


def test_a_jax_through_a_pth_file_grades_at_full_marks(tmp_path: Path) -> None:
    python = bare_python(tmp_path / "venv")
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    (Path(site) / "elsewhere.pth").write_text("\n".join(_elsewhere()) + "\n")
    _full_marks(_grade(python, tmp_path / "out", _without_pythonpath()))
