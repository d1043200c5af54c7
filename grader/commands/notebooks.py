"""Write one Jupyter notebook per lesson file, to work in (and to grade) instead of `.py`.

    grade notebooks                              exercises/*.py -> notebooks/*.ipynb
    grade notebooks --from solutions --out DIR   the reference notebooks
    grade notebooks --only 03_jit --force        replace one notebook
    grade notebooks --install 'git+https://github.com/COURSE/RELEASE'
                                                 what the setup cell installs (Colab)

Each notebook holds the lesson text and each function's docstring as markdown
and one code cell per function (see `grader.notebooks.export`), after a first code cell
that loads the `%grade` magic (`%load_ext grader`), installing the grader first when the
kernel has none (a fresh hosted kernel: `%pip install` of `--install`, by default the
grader's distribution; a course gives its student release, e.g. its git URL). A notebook that
already exists is kept unless `--force`: it may hold a student's work. Grade a
notebook, or a folder of them (mixed with `.py` files), with `grade PATH`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grader.commands import shared
from grader.notebooks.export import DEFAULT_INSTALL, dumps, notebook_of


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--from",
        dest="source",
        default="exercises",
        metavar="DIR",
        help="the lesson files to convert: exercises (default) or solutions, or any folder",
    )
    parser.add_argument(
        "--out",
        default="notebooks",
        metavar="DIR",
        help="where to write the notebooks (default: notebooks/; created if needed)",
    )
    parser.add_argument(
        "--only",
        default="",
        metavar="NAME[,NAME...]",
        help="convert only these lesson files, e.g. --only 03_jit,ex2_per_example_grads",
    )
    parser.add_argument(
        "--install",
        default=DEFAULT_INSTALL,
        metavar="SPEC",
        help="what the notebooks' first cell pip-installs on a kernel without the grader "
        f"(default: {DEFAULT_INSTALL}; e.g. the student release's git URL, for Colab)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="overwrite notebooks that already exist (default: keep them)",
    )


def run(args: argparse.Namespace) -> int:
    source, out = Path(args.source), Path(args.out)
    if not source.is_dir():
        raise shared.UsageError(
            f"--from {source}: no such folder; give the folder of lesson .py files, "
            "e.g. --from exercises or --from solutions"
        )
    files = sorted(p for p in source.glob("*.py") if not p.name.startswith("_"))
    wanted = [n.strip().removesuffix(".py") for n in args.only.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in {p.stem for p in files}]
    if unknown:
        raise shared.UsageError(f"--only: no {', '.join(f'{n}.py' for n in unknown)} in {source}/")
    if wanted:
        files = [p for p in files if p.stem in wanted]
    if not files:
        raise shared.UsageError(f"{source}/ holds no lesson .py files to convert")
    if out.exists() and not out.is_dir():
        raise shared.UsageError(f"--out {out} is a file; give a folder")
    out.mkdir(parents=True, exist_ok=True)

    written = kept = 0
    for path in files:
        target = out / f"{path.stem}.ipynb"
        if target.exists() and not args.force:
            print(f"kept  {target} (it exists and may hold your work; --force replaces it)")
            kept += 1
            continue
        try:
            text = dumps(notebook_of(path.read_text(encoding="utf-8"), path.stem, args.install))
        except SyntaxError as exc:
            raise shared.UsageError(
                f"{path} has a syntax error at line {exc.lineno}: {exc.msg}; "
                "fix it before converting"
            ) from None
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
        written += 1
    print(
        f"{written} notebook(s) written, {kept} kept, in {out}/. Open one in Jupyter and run "
        f"`%grade` in it, or grade them with `grade {out}/`."
    )
    return 0
