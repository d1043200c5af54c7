"""The README's install lines, each run as written in a clean venv, offline.

What a run proves, and how, with no network:
- The line's distributions: what pip will read (this checkout's pyproject.toml, the extras
  on the line, a self-referring `jax-lesson-grader[...]` followed) is walked through this
  environment's installed metadata (`grader.course.lock.closure`). A requirement missing
  here cannot be tried offline: the test skips and names it.
- The clean venv sees those distributions and nothing else (pip and setuptools added, as a
  fresh venv and `--no-build-isolation` need): their files are hard-linked into a
  `site-packages` folder of the test's own, named in a `.pth` line. Not a symlink: the
  sandbox reads only real folders of the installation. A folder two distributions share
  (a namespace package) is linked whole: the one place the venv may see more.
- The line is run there as written, plus `--no-index --no-build-isolation`: pip's own
  resolver must find every requirement satisfied, or fail; an extra the project does not
  declare (pip only warns) fails the test.
- Then what the role does with the install: the student's line grades a solution to full
  marks, `frameworks` grades 11_frameworks, the staff lines import what their commands
  load, the developers' editable install imports the grader from the checkout.

What it does not prove: that the index serves these versions (CI installs from it), nor
wheels for other platforms.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import pytest

from grader.course import lock

tomllib = pytest.importorskip("tomllib")  # Python 3.11
from packaging.requirements import Requirement  # noqa: E402  (after the skip above)

ROOT = Path(__file__).resolve().parent.parent
SOURCE_FILES = ("pyproject.toml", "README.md", "grader", "templates", "exercises", "solutions")
SKIPPED = shutil.ignore_patterns("__pycache__", "*.pyc", ".grade", "*.egg-info", "build")
GRADED = "Total {points}/{points} (100%)"

# Each README line, and what its role then does: argv run in the venv (`python`, `grade`
# are the venv's), and the text its output must hold.
ROLES: dict[str, tuple[list[str], str]] = {
    ".": (["grade", "solutions/01_arrays.py", "--no-html", "--no-color"], "(100%)"),
    ".[frameworks]": (["grade", "solutions/11_frameworks.py", "--no-html", "--no-color"], "(100%)"),
    ".[mutate]": (["python", "-c", "import grader.mutate.generate; print('mutate ok')"], "mutate ok"),
    ".[cluster]": (["python", "-c", "import dask.distributed; print('cluster ok')"], "cluster ok"),
    "-e .[dev]": (
        ["python", "-c", "import grader, mypy.api, xdist, libcst, flax, equinox, dask.distributed,"
         " jsonschema, xmlschema; print(grader.__file__)"],
        "src/grader/__init__.py",
    ),
}  # fmt: skip


def readme_lines() -> list[str]:
    """The `pip install ...` lines of the README's "Installing, by role" (their arguments)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Installing, by role", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [
        " ".join(shlex.split(line.split("#", 1)[0])[2:])
        for line in block.splitlines()
        if line.startswith("pip install ")
    ]


def test_the_readme_names_a_line_for_each_role_and_its_first_lines_are_the_developers() -> None:
    assert readme_lines() == list(ROLES)
    first = (ROOT / "README.md").read_text(encoding="utf-8").split("```bash\n", 1)[1]
    install, tests = first.split("```", 1)[0].splitlines()
    assert install == (
        "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && .venv/bin/grade solutions/"
    )
    assert tests == ".venv/bin/python -m pytest -n 2"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci and "pip install -q '.[dev]'" in ci  # CI: the same, not editable


def test_a_students_line_installs_no_staff_tooling() -> None:
    student = own_requirements(ROOT / "pyproject.toml")
    names = set(lock.closure((), own=student, build=()))
    assert not names & {"dask", "distributed", "mypy", "ruff", "libcst", "flax", "equinox"}
    assert {"dask", "mypy", "ruff", "libcst", "flax"} <= set(
        lock.closure(("dev",), own=student, build=())
    )


def own_requirements(pyproject: Path) -> Callable[[Sequence[str]], list[Requirement]]:
    """`lock.closure`'s `own`: the grader's requirements as pyproject.toml declares them."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]

    def own(extras: Sequence[str]) -> list[Requirement]:
        lines = list(project["dependencies"])
        for extra in extras:
            if extra not in project["optional-dependencies"]:
                pytest.fail(f"the README installs the extra {extra!r}, which pyproject.toml lacks")
            lines += project["optional-dependencies"][extra]
        return [Requirement(line) for line in lines]

    return own


def _link_tree(source: Path, dest: Path) -> None:
    if source.is_dir():
        for folder, _, files in os.walk(source):
            target = dest / Path(folder).relative_to(source)
            target.mkdir(parents=True, exist_ok=True)
            for name in files:
                os.link(os.path.join(folder, name), target / name)
    elif not dest.exists():
        os.link(source, dest)


def site_of(names: list[str], dest: Path) -> None:
    """Hard links to every file of the distributions `names` (their top-level entries, as
    their RECORD lists them) in `dest`; scripts outside site-packages are left out."""
    dest.mkdir(parents=True)
    for name in names:
        dist = metadata.distribution(name)
        base = Path(str(dist.locate_file("")))
        tops = {f.parts[0] for f in dist.files or [] if f.parts[0] != ".."}
        for top in sorted(tops):
            if (base / top).exists() and not (dest / top).exists():
                try:
                    _link_tree(base / top, dest / top)
                except OSError as exc:
                    pytest.skip(f"cannot hard-link {base / top} into the test's folder: {exc}")


def extras_of(line: str) -> tuple[str, ...]:
    found = re.search(r"\[([^\]]*)\]", line)
    return tuple(e.strip() for e in found[1].split(",")) if found else ()


@pytest.mark.slow
@pytest.mark.parametrize("line", list(ROLES))
def test_each_readme_line_installs_offline_in_a_clean_venv(line: str, tmp_path: Path) -> None:
    try:
        names = list(lock.closure(extras_of(line), own=own_requirements(ROOT / "pyproject.toml")))
    except lock.LockError as exc:
        pytest.skip(f"`pip install {line}` cannot be tried offline here: {exc}")
    site_of([*names, "pip"], tmp_path / "deps" / "site-packages")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")],
                   check=True)  # fmt: skip
    venv_site = sysconfig.get_paths(vars={"base": str(tmp_path / "venv")})["purelib"]
    Path(venv_site, "_deps.pth").write_text(str(tmp_path / "deps" / "site-packages") + "\n")
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCE_FILES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copyfile
        copy(ROOT / name, src / name, **({"ignore": SKIPPED} if (ROOT / name).is_dir() else {}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
    env.update(TMPDIR=str(tmp_path), PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               JAX_PLATFORMS="cpu", NO_COLOR="1", GRADE_COMPILATION_CACHE="off")  # fmt: skip
    python = tmp_path / "venv" / "bin" / "python"
    argv = [str(python), "-m", "pip", "install", "--no-index", "--no-build-isolation",
            *shlex.split(line)]  # fmt: skip
    proc = subprocess.run(argv, cwd=src, env=env, capture_output=True, text=True, timeout=300)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"pip install {line}: exit {proc.returncode}\n{said}"
    assert "does not provide the extra" not in said, said
    command, expected = ROLES[line]
    runs = [str(tmp_path / "venv" / "bin" / command[0]), *command[1:]]
    proc = subprocess.run(runs, cwd=src, env=env, capture_output=True, text=True, timeout=300)
    assert expected in proc.stdout, f"{command}: exit {proc.returncode}\n{proc.stdout}{proc.stderr}"
