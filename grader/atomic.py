"""Files written whole or not at all: written aside, then renamed into place.

A reader (the next run, a spreadsheet, `grade export`) sees the old file or the new one,
never half of one: a run interrupted, killed or short of disk space leaves what was there.
The file aside (`.NAME.<pid>.<n>.tmp`, beside the target, so the rename stays on one
file system) is removed when writing fails; `discard_pending` removes those of writes still
going on, for a process that must end at once (`grade batch` on a second Ctrl-C).

    atomic.write_text(out / "gradebook.csv", text)
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
from pathlib import Path

_pending: set[Path] = set()
_numbers = itertools.count()


class WriteError(OSError):
    """A file could not be written; says which and why ("could not write PATH: No space
    left on device"). What the target held before is intact."""

    def __init__(self, path: Path, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror or str(cause), str(path))

    def __str__(self) -> str:
        return f"could not write {self.filename}: {self.strerror}"


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write `data` to `path` all at once (see the module's docstring); `WriteError` when it
    cannot be, the target untouched. A target that is not a regular file (a link such as
    `/dev/stdout`, a pipe, a device) is written through, in place: renaming would replace
    it. The file gets the permissions a new file gets (the umask's)."""
    target = Path(path)
    if not _regular_or_absent(target):  # written through, as it always was
        try:
            with open(target, "wb") as stream:
                stream.write(data)
        except OSError as exc:
            raise WriteError(target, exc) from None
        return target
    aside = target.with_name(f".{target.name}.{os.getpid()}.{next(_numbers)}.tmp")
    _pending.add(aside)  # one operation each (the GIL's): safe from a signal handler
    try:
        fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)  # the disk's refusal (a full one) comes here at the latest
        finally:
            os.close(fd)
        os.replace(aside, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            aside.unlink()
        raise WriteError(target, exc) from None
    except BaseException:  # an interruption: nothing half-written stays behind
        with contextlib.suppress(OSError):
            aside.unlink()
        raise
    finally:
        _pending.discard(aside)
    return target


def _regular_or_absent(path: Path) -> bool:
    """True for a regular file or nothing; False for a link (`/dev/stdout`, a report the
    user points elsewhere: renaming would replace the link) and a device or a pipe."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except FileNotFoundError:
        return True
    except OSError:
        return False  # opening it says why


def write_text(path: str | Path, text: str) -> Path:
    """`write_bytes` of `text` in UTF-8."""
    return write_bytes(path, text.encode("utf-8"))


def discard_pending() -> None:
    """Remove the files aside of writes still going on (another thread's, or the one this
    thread was in when a signal came): for a process about to `os._exit`."""
    for aside in _pending.copy():
        with contextlib.suppress(OSError):
            aside.unlink()
