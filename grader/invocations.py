"""The `grade` commands a report tells a student to run, as they run from where the
student stands: `grade exercises/03_jit.py` from the repository, `grade 03_jit.py` inside
`exercises/`, `grade hint 03_jit` where `grade hint` finds that grading.

Paths only: nothing here reads a lesson file or imports the runner, so every report may
name these commands.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from grader.state import state_folder, state_folder_here


def shown(path: Path, cwd: Path | None = None) -> str:
    """`path` as a student can use it from where they stand: relative to the working folder
    when it lies in it (`exercises/03_jit.py`), else as given."""
    here = (Path.cwd() if cwd is None else cwd).resolve()
    try:
        absolute = path if path.is_absolute() else here / path
        return str(absolute.resolve().relative_to(here))
    except (ValueError, OSError, RuntimeError):
        return str(path)


def command(path: Path) -> str:
    """`grade exercises/03_jit.py`: the command that grades the file at `path` (`shown`)."""
    return f"grade {shlex.quote(shown(path))}"


def hint_command(lesson: str, graded: str, cwd: Path | None = None) -> str:
    """The command that shows more help for `lesson` of a grading of `graded` (the path
    `grade` graded: a folder or a lesson file; "" for what it grades by default), as it
    runs from `cwd`: `grade hint 03_jit` where `grade hint` finds that grading from there,
    else `grade hint` with the lesson file's path, whose state it then reads."""
    here = (Path.cwd() if cwd is None else cwd).resolve()
    given = here / graded if graded else here
    is_file = given.suffix in (".py", ".ipynb")
    folder = given.parent if is_file else given
    try:
        if state_folder(folder) == state_folder_here(here):
            return f"grade hint {lesson}"
    except (OSError, ValueError):  # a path no file can have (a NUL in a report read back)
        return f"grade hint {lesson}"
    file = given if is_file else folder / f"{lesson}.py"
    return f"grade hint {shlex.quote(shown(file, here))}"
