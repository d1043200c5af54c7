"""What a sandbox at `user` could read without Landlock, found before anything is graded.

At `user` the sandbox runs as a uid of its own, with no mount namespace. Where the kernel
offers Landlock it reads only an allow-list (`grader.sandbox.landlock`); where it does not
(`isolation.LANDLOCK_MISSING`), file permissions are its only wall: it can open any file
that "others" may read, by a name it knows from our source or finds in `/proc/*/cmdline`.
So before grading at that level the grader makes sure that what the sandbox must not read
is closed to other users:

- the hidden suites: repaired (the grader owns its installation: `chmod o-rwx` on the
  suites' folder, which closes every file in it), or refused where it cannot be;
- the reference solutions, the class's folders and the output folder: refused, naming
  each path and the command that closes it (the grader does not change an instructor's
  permissions behind their back).

A path is readable by others when every folder above it lets others through (`o+x`) and
it lets them read (`o+r`): knowing the name is enough, no listing needed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from grader.sandbox.isolation import LANDLOCK_MISSING, Isolation


class Exposed(Exception):
    """Something the sandbox must not read is readable by other users (a usage error)."""


def applies(found: Isolation) -> bool:
    """True when permissions are the only wall: `user` without Landlock."""
    return found.level == "user" and LANDLOCK_MISSING in found.missing


def _through(folder: Path) -> bool:
    """Whether other users can pass through every folder from / down to `folder`."""
    for part in (folder, *folder.parents):
        try:
            if not os.stat(part).st_mode & stat.S_IXOTH:
                return False
        except OSError:
            return False
    return True


def readable_by_others(path: Path) -> list[Path]:
    """`path` itself, or the files and folders under it, that other users can read."""
    path = path.resolve()
    if not path.exists() or not _through(path.parent):
        return []
    found = []
    todo = [path]
    while todo:
        here = todo.pop()
        try:
            mode = os.lstat(here).st_mode
        except OSError:
            continue
        if stat.S_ISDIR(mode):
            if not mode & stat.S_IXOTH:
                continue  # closed: nothing below it is reachable
            if mode & stat.S_IROTH:
                found.append(here)
            todo.extend(sorted(here.iterdir()))
        elif stat.S_ISREG(mode) and mode & stat.S_IROTH:
            found.append(here)
    return found


@dataclass(frozen=True)
class Guard:
    """A folder the sandbox must not read, and whether the grader may close it itself."""

    path: Path
    what: str  # "the hidden suites", "the reference solutions", ...
    repair: bool = False


def secure(guards: Iterable[Guard]) -> list[str]:
    """Close or refuse: returns the notes of what was repaired; raises `Exposed` naming every
    path that stays readable, with the fix."""
    notes, refused = [], []
    for guard in guards:
        open_ = readable_by_others(guard.path)
        if not open_:
            continue
        if guard.repair:
            try:
                folder = guard.path.resolve()
                os.chmod(folder, os.stat(folder).st_mode & ~0o007)
            except OSError:
                pass
            else:
                if not readable_by_others(guard.path):
                    notes.append(
                        f"{guard.what} ({folder}) were readable by other users: closed them "
                        f"(chmod o-rwx {folder}), so the sandbox cannot read them"
                    )
                    continue
        refused.append(
            f"{guard.what}: {open_[0]}"
            + (f" (and {len(open_) - 1} more under {guard.path})" if len(open_) > 1 else "")
            + f" is readable by other users. Close it: chmod -R o-rwx {guard.path}"
        )
    if refused:
        raise Exposed(
            "".join(f"{note}\n" for note in notes)
            + "isolation 'user' without Landlock: file permissions are the sandbox's only wall, "
            "and these are open to it:\n  " + "\n  ".join(refused) + "\n(or grade where "
            "namespaces are allowed (strict) or the kernel has Landlock (Linux 5.13+))"
        )
    return notes
