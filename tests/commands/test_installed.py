"""Every instructor command from a grader installed with `pip install .` (not editable), run
in a copy of the course outside the source tree: the course is the working folder (or
`--course PATH`), the grader's own files come from the installed package.

The grader is built into a wheel once for the module, without network (no build isolation,
no index), and installed into a venv of its own that sees this environment's dependencies
through a `.pth` line (not its `.pth` files: an editable install of the checkout stays out).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT

from grader import catalog

SOURCE_FILES = ("pyproject.toml", "README.md", "grader", "templates", "exercises", "solutions")
# The course's own files: the clone keeps no grader/ nor templates/, so that a command that
# read the grader's files from the working folder instead of its install would fail here.
COURSE_FILES = ("pyproject.toml", "exercises", "solutions", "docs/lesson-spec.md")
COURSE_SETTING = "\n[tool.grade]\nshow_fixes = false\n"
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", ".grade")


def _can_build_wheels() -> bool:
    """setuptools builds wheels by itself from 70.1; before that it needs `wheel`."""
    try:
        import setuptools
    except ImportError:
        return False
    major, minor = (int(x) for x in setuptools.__version__.split(".")[:2])
    if (major, minor) >= (70, 1):
        return True
    try:
        import wheel  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class Installed:
    root: Path  # the test's folder: course/, venvs, outputs
    course: Path  # a copy of the course repository, away from the source tree
    env: dict[str, str]

    def venv(self, name: str) -> Path:
        """A venv without pip that sees this environment's packages (after its own)."""
        folder = self.root / name
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
        site = sysconfig.get_paths(vars={"base": str(folder), "platbase": str(folder)})
        lines = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
        Path(site["purelib"], "_test_dependencies.pth").write_text("\n".join(lines) + "\n")
        return folder / "bin" / "python"

    def pip_install(self, python: Path, what: Path) -> None:
        # --ignore-installed: the packages seen through the .pth (CI's own non-editable
        # grader among them) must neither satisfy the request nor be uninstalled
        self.run(
            python, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
            "--ignore-installed", str(what),
        )  # fmt: skip

    def run(self, *argv: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(a) for a in argv],
            cwd=cwd or self.course,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}"
        return proc

    @property
    def grade(self) -> Path:
        return self.root / "venv" / "bin" / "grade"


def _env(root: Path) -> dict[str, str]:
    """No network, no caches, temporary files under `root`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
    env.update(
        TMPDIR=str(root / "tmp"),
        PIP_NO_INDEX="1",
        PIP_NO_CACHE_DIR="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        JAX_PLATFORMS="cpu",
        NO_COLOR="1",
    )
    return env


def _copy(source: Path, dest: Path, names: tuple[str, ...]) -> None:
    dest.mkdir()
    for name in names:
        if (source / name).is_dir():
            shutil.copytree(source / name, dest / name, ignore=SKIPPED)
        else:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / name, dest / name)


def _build(root: Path) -> Installed:
    """The grader built from a copy of the source tree and installed into `root`/venv;
    the course's files copied into `root`/course."""
    (root / "tmp").mkdir(parents=True)
    _copy(ROOT, root / "src", SOURCE_FILES)
    course = root / "course"
    _copy(ROOT, course, COURSE_FILES)
    with (course / "pyproject.toml").open("a") as pyproject:
        pyproject.write(COURSE_SETTING)
    found = Installed(root, course, _env(root))
    found.run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
              "-w", root / "wheels", root / "src")  # fmt: skip
    python = found.venv("venv")
    found.pip_install(python, next((root / "wheels").glob("*.whl")))
    (root / "ready").touch()
    return found


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Installed:
    """Built once per test run: under xdist, the first worker builds it in the run's
    folder (shared by the workers) while the others wait on a lock."""
    if not _can_build_wheels():
        pytest.skip("building the grader's wheel offline needs setuptools>=70.1 (the dev extra)")
    base = tmp_path_factory.getbasetemp()
    run_folder = base if worker_id == "master" else base.parent
    root = run_folder / "installed-grader"
    with (run_folder / "installed-grader.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / "ready").is_file():
            return Installed(root, root / "course", _env(root))
        return _build(root)


def test_the_grader_runs_from_its_install_not_the_source_tree(installed: Installed) -> None:
    proc = installed.run(installed.root / "venv" / "bin" / "python", "-c",
                         "import grader; print(grader.__file__)", cwd=installed.root)  # fmt: skip
    assert Path(proc.stdout.strip()).is_relative_to(installed.root / "venv")


def test_release_from_the_course_folder_installs_and_holds_no_solution(
    installed: Installed,
) -> None:
    out = installed.root / "student-repo"
    proc = installed.run(installed.grade, "release", out)
    assert "wrote the student repository" in proc.stdout
    assert (out / "grader" / "templates" / "report.html.j2").is_file()
    assert not (out / "solutions").exists() and not (out / "templates").exists()
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    project = tomllib.loads((out / "pyproject.toml").read_text())
    assert project["project"]["name"] == "jax-lesson-grader"
    assert "jax>=0.4.30" in project["project"]["dependencies"]
    assert project["project"]["scripts"] == {"grade": "grader.cli:main"}
    assert project["tool"]["grade"] == {"show_fixes": False}  # the course's setting
    # What students do with it: install it, and the grader finds its templates.
    student = installed.venv("student-venv")
    installed.pip_install(student, out)
    proc = installed.run(student, "-c", "from importlib import resources; print("
                         "resources.files('grader.templates').joinpath('report.html.j2')"
                         ".is_file(), resources.files('grader').joinpath('py.typed').is_file())",
                         cwd=installed.root)  # fmt: skip
    assert proc.stdout.split() == ["True", "True"]


def test_a_per_lesson_gradescope_bundle_scores_a_correct_upload_at_full_marks(
    installed: Installed,
) -> None:
    bundle = installed.root / "jit.zip"
    installed.run(installed.grade, "gradescope-bundle", bundle, "--only", "03_jit",
                  "--require-isolation", "basic", "--course", installed.course,
                  cwd=installed.root)  # fmt: skip
    autograder = installed.root / "autograder"
    with zipfile.ZipFile(bundle) as zipped:
        suites = [n for n in zipped.namelist() if n.startswith("grader/suites/test_")]
        zipped.extractall(autograder / "source")
    assert suites == ["grader/suites/test_03_jit.py"]
    python = installed.venv("gradescope-venv")
    installed.pip_install(python, autograder / "source")  # what setup.sh does
    (autograder / "submission").mkdir()
    shutil.copy(installed.course / "solutions" / "03_jit.py", autograder / "submission")
    env = dict(installed.env, AUTOGRADER_ROOT=str(autograder), AUTOGRADER_PYTHON=str(python))
    proc = subprocess.run(["bash", str(autograder / "source" / "run_autograder")], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((autograder / "results" / "results.json").read_text())
    jit = catalog.by_name(installed.root / "src" / "grader" / "suites")["03_jit"]
    assert results["score"] == jit.max_score == sum(t["max_score"] for t in results["tests"])


def test_verify_only_checks_the_lesson_files_it_names(installed: Installed) -> None:
    # One run of the solutions (the second, for stability, is test_verify's business).
    proc = installed.run(installed.grade, "verify", "--only", "03_jit,ex2_per_example_grads",
                         "--runs", "1", "--course", installed.course,
                         cwd=installed.root)  # fmt: skip
    assert "grade verify: OK. 2 lesson file(s)" in proc.stdout


def test_assign_and_ci_template_work_on_the_course(installed: Installed) -> None:
    assert "in sync" in installed.run(installed.grade, "assign", "--check").stdout
    installed.run(installed.grade, "ci-template", "--course", installed.course, cwd=installed.root)
    assert (installed.course / ".github" / "workflows" / "grade.yml").is_file()
