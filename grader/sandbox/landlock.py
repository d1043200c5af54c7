"""File-system confinement without privileges: Linux's Landlock (kernel 5.13 and later).

At `user` and `basic` the sandbox has no mount namespace, so it could read whatever its user
may: at `user` every world-readable file (the installed hidden suites, a classmate's folder,
the instructor's solutions), at `basic` all of the grader's user's files. Landlock lets any
process, without root, give up file access for itself and its children. The sandbox does so
before the student's module loads, with the allow-list `strict` builds its root from
(`isolation._build_root`): the system and the Python installation readable (the masked paths,
the hidden suites, left out), its own folders writable, a few devices; nothing else, not even
for reading. From ABI 6 on, it also may no longer signal processes outside its domain (the
judge, the worker, `grade`) nor reach their abstract Unix sockets.

    abi = landlock.abi()                     # 0: not in this kernel (or refused by seccomp)
    landlock.confine(readable=..., writable=..., masked=...)   # in the sandbox, irreversible

Everything is a system call through libc: `landlock_create_ruleset` (444),
`landlock_add_rule` (445), `landlock_restrict_self` (446), the same numbers on x86-64 and
arm64.
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Iterable

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

_libc = ctypes.CDLL(None, use_errno=True)


def _handled(abi: int) -> int:
    rights = (1 << 13) - 1  # EXECUTE .. MAKE_SYM (ABI 1)
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def _file_rights(abi: int) -> int:
    """The rights that apply to a file (a rule on a file may hold no others)."""
    return _handled(abi) & (EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV)


def abi() -> int:
    """The Landlock ABI version this kernel offers; 0 when there is none (an old kernel, a
    kernel without it, a container whose seccomp profile refuses the call, gVisor)."""
    try:
        version = int(_libc.syscall(SYS_CREATE_RULESET, None, 0, CREATE_RULESET_VERSION))
    except (AttributeError, OSError):
        return 0
    return version if version > 0 else 0


def _error(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"landlock {what}: {os.strerror(err)}")


LIST = "list"
"""A folder that may be listed, not read below (`_rules`)."""


def _rules(readable: Iterable[str], masked: Iterable[str]) -> list[tuple[str, bool | str]]:
    """(path, is_read) rules covering `readable` without `masked`: a readable folder that
    holds a masked one is opened up child by child, down to the masked folder's siblings.

    Every path is resolved before it is judged, as the kernel resolves it when the rule is
    added: a child that is a symbolic link (a venv's `lib64 -> lib`, a folder linked in by a
    `.pth` file or an editable install) gets a rule for its target only if the target holds
    no masked folder, else the target is opened up child by child like any other.

    A folder opened up so is itself given the right to be listed (`LIST`), which Python's
    import system needs to find the modules beside the masked one (a venv's site-packages
    around the grader's package). Landlock's rights hold for everything below a rule, so
    the names in a masked folder can be listed: its files cannot be read."""
    hidden = [os.path.realpath(m) for m in masked]
    out: list[tuple[str, bool | str]] = []
    seen: set[str] = set()

    def add(path: str) -> None:
        path = os.path.realpath(path)
        if path in seen:
            return
        seen.add(path)
        inside = [m for m in hidden if m == path or m.startswith(path.rstrip(os.sep) + os.sep)]
        if not inside:
            out.append((path, True))
            return
        if path in inside or not os.path.isdir(path):
            return  # the masked folder itself: no rule
        try:
            children = sorted(os.listdir(path))
        except OSError:
            return
        out.append((path, LIST))
        for name in children:
            add(os.path.join(path, name))

    for path in readable:
        if os.path.lexists(path):
            add(path)
    return out


def confine(*, readable: Iterable[str], writable: Iterable[str], masked: Iterable[str] = ()) -> int:
    """Restrict this process and its future children, for good: read (and run) only
    `readable`, write only `writable` (folders or files, devices included); `masked` stays out of reach even
    inside a readable folder. Returns the ABI used; raises `OSError` when the kernel refuses."""
    version = abi()
    if version <= 0:
        raise OSError("landlock: not offered by this kernel")
    handled = _handled(version)
    if version >= 6:
        attr = struct.pack("QQQ", handled, 0, SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    elif version >= 4:
        attr = struct.pack("QQ", handled, 0)
    else:
        attr = struct.pack("Q", handled)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = int(_libc.syscall(SYS_CREATE_RULESET, buffer, len(attr), 0))
    if ruleset < 0:
        raise _error("create_ruleset")
    try:
        read = EXECUTE | READ_FILE | READ_DIR
        rules = _rules(readable, masked)
        rules += [(os.path.realpath(p), False) for p in writable if os.path.lexists(p)]
        for path, kind in rules:
            rights = READ_DIR if kind == LIST else read if kind else handled
            _add(ruleset, path, rights, version)
        if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise _error("no_new_privs")
        if _libc.syscall(SYS_RESTRICT_SELF, ruleset, 0) != 0:
            raise _error("restrict_self")
    finally:
        os.close(ruleset)
    return version


def _add(ruleset: int, path: str, rights: int, version: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone, or not ours to open: no rule, so no access
    try:
        if not os.path.isdir(path):
            rights &= _file_rights(version)
        attr = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        if _libc.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, attr, 0) != 0:
            raise _error(f"add_rule {path}")
    finally:
        os.close(fd)
