"""Write one Jupyter notebook per lesson file, to work in (and to grade) instead of `.py`.

    grade notebooks                              exercises/*.py -> notebooks/*.ipynb
    grade notebooks --from solutions --out DIR   the reference notebooks
    grade notebooks --only 03_jit --force        replace one notebook
    grade notebooks --install 'jax-lesson-grader @ git+https://github.com/COURSE/RELEASE'
                                                 what the setup cell installs (Colab)

Each notebook holds the lesson text and each function's docstring as markdown
and one code cell per function (see `grader.notebooks.from_lesson`), after a first code cell
that loads the `%grade` magic (`%load_ext grader`), installing the grader first when the
kernel has none (a fresh hosted kernel: `%pip install` of `--install`, by default the
release whose URL `grade release --url` recorded: `[tool.grade] release_url` of the
pyproject.toml here, the course's or the release's; with none, the cell says to install the
grader in the kernel's venv, since no package index serves it). A notebook that
already exists is kept unless `--force`: it may hold a student's work. Grade a
notebook, or a folder of them (mixed with `.py` files), with `grade PATH`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader import settings
from grader.errors import GraderError
from grader.notebooks.from_lesson import DEFAULT_INSTALL, dumps, notebook_of

DISTRIBUTION = "jax-lesson-grader"


class CannotConvert(GraderError, ValueError):
    """The request names no lesson file to convert, or a place that cannot hold notebooks."""


@dataclass(frozen=True)
class Converted:
    written: int
    kept: int
    out: Path

    def summary(self) -> str:
        return (
            f"{self.written} notebook(s) written, {self.kept} kept, in {self.out}/. Open one "
            f"in Jupyter and run `%grade` in it, or grade them with `grade {self.out}/`."
        )


def recorded_install(folder: Path) -> str:
    """What the setup cell installs by default: the grader from the release's recorded URL
    (`jax-lesson-grader @ URL`), or "" when `grade release` recorded none."""
    try:
        url = settings.release_url(folder.resolve())
    except settings.SettingError:  # a malformed pyproject: the default install
        url = ""
    return f"{DISTRIBUTION} @ {url}" if url else DEFAULT_INSTALL


def lesson_files(source: Path, only: str) -> list[Path]:
    """The lesson `.py` files of `source` to convert (`only`: comma-separated names)."""
    if not source.is_dir():
        raise CannotConvert(
            f"--from {source}: no such folder; give the folder of lesson .py files, "
            "e.g. --from exercises or --from solutions"
        )
    files = sorted(p for p in source.glob("*.py") if not p.name.startswith("_"))
    wanted = [n.strip().removesuffix(".py") for n in only.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in {p.stem for p in files}]
    if unknown:
        raise CannotConvert(f"--only: no {', '.join(f'{n}.py' for n in unknown)} in {source}/")
    if wanted:
        files = [p for p in files if p.stem in wanted]
    if not files:
        raise CannotConvert(f"{source}/ holds no lesson .py files to convert")
    return files


def convert(
    source: Path,
    out: Path,
    *,
    only: str = "",
    install: str | None = None,
    force: bool = False,
    say: Callable[[str], None] = print,
) -> Converted:
    """Write `out/NAME.ipynb` for each lesson file of `source`; one that exists is kept
    unless `force` (it may hold a student's work). `say` gets a line per notebook.
    `install`: what the setup cells install (None: `recorded_install` of the working folder)."""
    files = lesson_files(source, only)
    if install is None:
        install = recorded_install(Path.cwd())
    if out.exists() and not out.is_dir():
        raise CannotConvert(f"--out {out} is a file; give a folder")
    out.mkdir(parents=True, exist_ok=True)
    written = kept = 0
    for path in files:
        target = out / f"{path.stem}.ipynb"
        if target.exists() and not force:
            say(f"kept  {target} (it exists and may hold your work; --force replaces it)")
            kept += 1
            continue
        try:
            text = dumps(notebook_of(path.read_text(encoding="utf-8"), path.stem, install))
        except SyntaxError as exc:
            raise CannotConvert(
                f"{path} has a syntax error at line {exc.lineno}: {exc.msg}; "
                "fix it before converting"
            ) from None
        target.write_text(text, encoding="utf-8")
        say(f"wrote {target}")
        written += 1
    return Converted(written, kept, out)
