"""What the sandbox may do, and how its privileges are dropped: three levels.

- `strict`  an unprivileged user of its own, in its own PID, network, mount, IPC
            and UTS namespaces. Its filesystem is built from an allow-list: the
            system and Python installation read-only (the grader's suites masked),
            its lesson files and a scratch folder read-write, a private /tmp.
            No network (only a loopback of its own). When its first process ends,
            the kernel ends every process it started.
- `user`    an unprivileged user of its own, no namespaces (a container without
            CAP_SYS_ADMIN): it cannot signal, trace or write into the grader's
            processes and files, but it can read what is world-readable.
- `basic`   the judge/sandbox split alone (a student's own laptop, not root): the
            judge still never runs student code, but the sandbox is the same user.

Everything here is Linux itself: `unshare(2)`, `mount(2)`, `pivot_root(2)`,
`setresuid(2)` and `prctl(2)` called through libc (Python 3.11 has no
`os.unshare`). bubblewrap would give the same namespaces, but only to a process
it starts with `exec`: the sandbox would pay a fresh `import jax` (~2.5 s) per
lesson file, where a fork of the warm worker pays nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import os
import platform
import resource
import shutil
import socket
import stat
import struct
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# re-exported: the levels are data (grader.isolation_levels)
from grader.isolation_levels import LEVELS as LEVELS
from grader.isolation_levels import Isolation as Isolation
from grader.isolation_levels import Level as Level

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 4, 38, 36
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine())

UID_BASE = 1_000_000
"""A sandbox runs as `UID_BASE + judge pid`: unique while its judge lives, in no group."""
FALLBACK_UID = 65534
"""`nobody`, where the platform maps no high uids (some containers)."""
MAX_PROCESSES = 512
"""RLIMIT_NPROC of a sandbox user (XLA's threads count): a fork bomb stops here."""
SCRATCH_MB = 512
"""Size of a strict sandbox's private /tmp."""

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_libc.mount.argtypes = [
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_ulong,
    ctypes.c_char_p,
]
_libc.mount.restype = ctypes.c_int


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def _bytes(text: str | None) -> bytes | None:
    return text.encode() if text is not None else None


def mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None
) -> None:
    result: int = _libc.mount(_bytes(source), _bytes(target), _bytes(fstype), flags, _bytes(data))
    _check(result, f"mount {target}")


def prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), "prctl")


def make_subreaper() -> None:
    """Orphans of this process's descendants become its children (so none escape cleanup)."""
    prctl(PR_SET_CHILD_SUBREAPER, 1)


def hide_from_same_user() -> None:
    """No core dumps and no /proc/<pid>/fd|mem access by same-uid processes (the judge)."""
    prctl(PR_SET_DUMPABLE, 0)


# -- detection (in the parent, without JAX) -------------------------------------------


LANDLOCK_MISSING = (
    "file-system confinement (Landlock, Linux 5.13 or later: the sandbox can read what its "
    "user may)"
)


def detect() -> Isolation:
    """The strongest level this machine allows, found by trying it in a throwaway child."""
    found = _detect_level()
    if found.level == "strict":
        return found
    from grader.sandbox import landlock

    if landlock.abi() > 0:
        return found
    return Isolation(found.level, (*found.missing, LANDLOCK_MISSING))


def _detect_level() -> Isolation:
    if os.geteuid() != 0:
        return Isolation(
            "basic",
            (
                "root (to switch the sandbox to a user of its own)",
                "namespaces (unprivileged user namespaces are not used yet)",
            ),
        )
    if _try_in_child(
        lambda: unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    ):
        return Isolation("strict")
    no_namespaces = "namespaces (unshare is not permitted: no CAP_SYS_ADMIN)"
    closed = closed_to_sandbox(sandbox_reads())
    if closed is not None:
        return Isolation("basic", (no_namespaces, closed.missing()))
    return Isolation("user", (no_namespaces,))


# -- what a sandbox's user can reach (the evidence behind `user`) ----------------------


@dataclass(frozen=True)
class Closed:
    """A folder a sandbox at `user` needs (`needed`) that a user of its own could not reach,
    what the probe saw (`error`), and the folder that stops it (`folder`, with its `mode`):
    the first one on the way that other users may not enter, or `needed` itself."""

    needed: str
    error: str
    folder: str
    mode: int

    def __str__(self) -> str:
        return (
            f"{self.folder} (mode {self.mode:o}) is closed to other users, so the sandbox's "
            f"user cannot read {self.needed} ({self.error})"
        )

    @property
    def fix(self) -> str:
        return (
            f"let other users read it (`chmod o+rx {self.folder}`) or install where they may, "
            "or grade at another level (`--isolation strict` where namespaces are allowed, "
            "`--isolation basic` otherwise)"
        )

    def missing(self) -> str:
        """The entry `detect` adds to `Isolation.missing` when it falls back to `basic`."""
        return f"an installation other users can read ({self}; fix: {self.fix})"


def sandbox_reads() -> tuple[str, ...]:
    """What a sandbox at `user` imports from, lazily, after its user is switched: the Python
    installation (`python_paths`) and the grader's own package (a source checkout's, too)."""
    package = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    return tuple(sorted({*python_paths(), package}))


def closed_to_sandbox(read: Iterable[str] = (), enter: Iterable[str] = ()) -> Closed | None:
    """Evidence, not modes: fork a child that switches to a user of its own as a sandbox
    does (`_drop_user`, needs root), and try each folder of `read` as an import would (stat
    it, list it, open a file in it) and each of `enter` as the sandbox reads the judge's
    compilation cache (pass through, entries read by name). The first that fails, and the
    folder that stops it; None when the sandbox's user reaches them all."""
    tasks = [(path, True) for path in read] + [(path, False) for path in enter]
    uid = sandbox_uid(os.getpid())
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's work is seen through the pipe
        try:
            os.close(out_r)
            _drop_user(uid)
            for index, (path, listed) in enumerate(tasks):
                failed = _reach(path, listed=listed)
                if failed is not None:
                    os.write(out_w, f"{index}\0{failed[0]}\0{failed[1]}".encode())
                    break
        except BaseException as exc:
            os.write(out_w, f"-1\0\0{exc}".encode(errors="replace"))
        os._exit(0)
    os.close(out_w)
    with os.fdopen(out_r, "rb") as pipe:
        said = pipe.read().decode(errors="replace")
    os.waitpid(pid, 0)
    if not said:
        return None
    number, blocked, error = said.split("\0", 2)
    if int(number) < 0:
        raise OSError(f"the level check could not switch users: {error}")
    needed, listed = tasks[int(number)]
    folder, mode = _stopper(blocked or needed, listed=listed)
    return Closed(needed, error, folder, mode)


def _reach(path: str, *, listed: bool) -> tuple[str, str] | None:
    """What stops this process from reading `path` as an import does: (the path it could
    not open, why), or None."""
    try:
        os.stat(path)
        if not listed:
            return None if os.access(path, os.X_OK) else (path, "it cannot pass through")
        for name in sorted(os.listdir(path)):
            inside = os.path.join(path, name)
            if os.path.isfile(inside):
                with open(inside, "rb") as fh:
                    fh.read(1)
                break
    except OSError as exc:
        blocked = str(exc.filename) if exc.filename else path
        return blocked, exc.strerror or str(exc)
    return None


def _stopper(path: str, *, listed: bool) -> tuple[str, int]:
    """What keeps other users from `path`, read as root: the first folder on the way they
    may not pass through, else `path` when they may not read it (or pass through it, for a
    folder `listed`); else `path` itself (an ACL or a security module decided, not modes)."""
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    for i in range(2, len(parts) + 1):
        folder = os.sep.join(parts[:i])
        try:
            info = os.stat(folder)
        except OSError:
            return folder, 0
        mode, last = stat.S_IMODE(info.st_mode), folder == real
        folder_needs = 0o005 if last and listed else 0o001
        needs = folder_needs if stat.S_ISDIR(info.st_mode) else 0o004
        if mode & needs != needs:
            return folder, mode
    try:
        return real, stat.S_IMODE(os.stat(real).st_mode)
    except OSError:
        return real, 0


def _try_in_child(action: Callable[[], None]) -> bool:
    pid = os.fork()
    if pid == 0:
        try:
            action()
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def at_least(have: Level, want: Level) -> bool:
    return LEVELS.index(have) >= LEVELS.index(want)


def sandbox_uid(judge_pid: int) -> int:
    return UID_BASE + judge_pid


# -- entering a level (in the forked sandbox, before the student's module is imported) -----


@dataclass(frozen=True)
class Plan:
    """Where the sandbox lives: `writable` folders (its lessons, its scratch) are the only
    places it may write; `readable` adds the Python installation; `masked` are hidden."""

    uid: int
    writable: tuple[str, ...]
    readable: tuple[str, ...]
    masked: tuple[str, ...]
    newroot: str  # an empty folder to build the strict root in (owned by the judge)
    quota_bytes: int = 0  # at strict: one tmpfs of this size holds every writable place
    quota_files: int = 0  # ... and this many inodes (`grader.sandbox.quota`)


def python_paths() -> tuple[str, ...]:
    """The installation a sandbox needs to read: prefixes and every absolute sys.path folder
    that lies in one of them or in a site-packages (never a source checkout or cwd)."""
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    paths = set(prefixes)
    for entry in sys.path:
        if not entry or not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if (
            "site-packages" in real
            or "dist-packages" in real
            or any(real.startswith(p + os.sep) for p in prefixes)
        ):
            paths.add(real)
    paths.add(os.path.realpath(os.path.dirname(sys.executable)))
    return tuple(sorted(_outermost(paths)))


def _outermost(paths: Iterable[str]) -> set[str]:
    ordered = sorted(paths)
    kept: list[str] = []
    for p in ordered:
        if not any(p == k or p.startswith(k + os.sep) for k in kept):
            kept.append(p)
    return set(kept)


SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
DEVICES = ("null", "zero", "full", "random", "urandom")


def enter(level: Level, plan: Plan) -> None:
    """Drop to `level`. For `strict` the caller has already forked into the new PID
    namespace (see `launch`); this builds the filesystem and drops the user."""
    if level == "strict":
        _build_root(plan)
        _loopback_up()
    if level in ("strict", "user"):
        for folder in plan.writable:
            _chown_tree(folder, plan.uid)
        _drop_user(plan.uid)
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def confine_files(plan: Plan) -> bool:
    """At `user` and `basic`: read only the system, the installation (`plan.readable`, its
    `masked` folders left out) and write only `plan.writable`, through Landlock where the
    kernel offers it (`grader.sandbox.landlock`); False where it does not (`detect` reports it
    as missing, and the level's old limits apply). Where the kernel offers Landlock and still
    refuses these rules, `ConfinementFailed`: the grading stops rather than claim a
    confinement it does not have."""
    from grader.sandbox import landlock

    if landlock.abi() <= 0:
        return False
    try:
        landlock.confine(
            readable=(*SYSTEM_PATHS, "/proc", *plan.readable),  # strict's /proc is its own
            writable=(*plan.writable, *(f"/dev/{d}" for d in DEVICES)),
            masked=plan.masked,
        )
    except OSError as exc:
        raise ConfinementFailed(
            f"the grader could not confine the sandbox's files with Landlock ({exc}); "
            "nothing of the student's ran"
        ) from exc
    return True


class ConfinementFailed(OSError):
    """The kernel offers Landlock but refused the sandbox's rules (`confine_files`)."""


def _drop_user(uid: int) -> None:
    os.setgroups([])
    try:
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            raise
        os.setresgid(FALLBACK_UID, FALLBACK_UID, FALLBACK_UID)
        os.setresuid(FALLBACK_UID, FALLBACK_UID, FALLBACK_UID)
    if os.geteuid() == 0 or os.getuid() == 0:
        raise OSError("the sandbox is still root after dropping privileges")
    resource.setrlimit(resource.RLIMIT_NPROC, (MAX_PROCESSES, MAX_PROCESSES))


def _chown_tree(folder: str, uid: int) -> None:
    for root, dirs, files in os.walk(folder):
        os.chown(root, uid, uid)
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)


def _bind(source: str, target: str, *, readonly: bool) -> None:
    if os.path.islink(source):
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.lexists(target):
            os.symlink(os.readlink(source), target)
        return
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "ab").close()
    mount(source, target, None, MS_BIND | MS_REC)
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | (MS_RDONLY if readonly else 0)
    if not target.endswith(tuple(f"/dev/{d}" for d in DEVICES)):
        flags |= MS_NODEV
    mount(None, target, None, flags)


def _build_root(plan: Plan) -> None:
    """A new root from the allow-list, then `pivot_root` into it (as bubblewrap does)."""
    # The folders made here are the sandbox user's way to its files: the caller's umask (a
    # hardened 077) would close them to it (this process is the sandbox's alone).
    os.umask(0o022)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = plan.newroot
    os.makedirs(root, exist_ok=True)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")

    def inside(path: str) -> str:
        return root + path

    # Scratch first: the writable folders may live under /tmp and are bound on top of it.
    area = _scratch(plan, inside)
    for path in SYSTEM_PATHS + plan.readable:
        if os.path.lexists(path):
            _bind(path, inside(path), readonly=True)
    for path in plan.masked:
        if os.path.isdir(inside(path)):
            mount(
                "tmpfs",
                inside(path),
                "tmpfs",
                MS_NOSUID | MS_NODEV | MS_RDONLY,
                "mode=0555,size=4k",
            )
    workdir = os.path.realpath(os.path.dirname(plan.newroot)) + os.sep
    for path in plan.writable:
        source = path
        if area and path.startswith(workdir):  # the grading's own: a copy on the quota's tmpfs
            source = area + "/w" + path
            shutil.copytree(path, source, symlinks=True)
        _bind(source, inside(path), readonly=False)
    _devices(inside, area)
    os.makedirs(inside("/proc"), exist_ok=True)
    mount("proc", inside("/proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _pivot(root)


def _scratch(plan: Plan, inside: Callable[[str], str]) -> str:
    """The new root's /tmp: on the quota's tmpfs (returned: its mount point) when the plan
    has a quota, else a tmpfs of its own ("" returned)."""
    os.makedirs(inside("/tmp"), exist_ok=True)
    area = _quota_area(plan, inside("/.writable")) if plan.quota_bytes else ""
    if area:
        _bind(os.path.join(area, "tmp"), inside("/tmp"), readonly=False)
    else:
        mount(
            "tmpfs", inside("/tmp"), "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={SCRATCH_MB}m"
        )
    return area


def _devices(inside: Callable[[str], str], area: str) -> None:
    """The new root's /dev: the harmless devices, /dev/shm (on the quota's tmpfs `area`,
    which is then unmounted from its own place, when given) and the standard streams."""
    os.makedirs(inside("/dev"), exist_ok=True)
    for dev in DEVICES:
        _bind(f"/dev/{dev}", inside(f"/dev/{dev}"), readonly=False)
    os.makedirs(inside("/dev/shm"), exist_ok=True)
    if area:
        _bind(os.path.join(area, "shm"), inside("/dev/shm"), readonly=False)
        _check(_libc.umount2(area.encode(), MNT_DETACH), "umount the quota's tmpfs")
        os.rmdir(area)  # its folders stay mounted where they were bound
    else:
        mount("tmpfs", inside("/dev/shm"), "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, inside(f"/dev/{name}"))


def _pivot(root: str) -> None:
    """Make `root` this process's root (the old one detached), read-only from then on."""
    os.chdir(root)
    if SYS_PIVOT_ROOT is not None and _libc.syscall(SYS_PIVOT_ROOT, b".", b".") == 0:
        _check(_libc.umount2(b".", MNT_DETACH), "umount old root")
    else:
        os.chroot(".")
    os.chdir("/")
    mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _quota_area(plan: Plan, area: str) -> str:
    """One tmpfs of `plan.quota_bytes` and `plan.quota_files` inodes at `area`, with the
    folders that become /tmp and /dev/shm: every place a strict sandbox may write is on it,
    so the kernel holds the quota for them all together (`grader.sandbox.quota`)."""
    os.makedirs(area, exist_ok=True)
    options = f"mode=0755,size={plan.quota_bytes},nr_inodes={plan.quota_files}"
    mount("tmpfs", area, "tmpfs", MS_NOSUID | MS_NODEV, options)
    for name in ("tmp", "shm"):
        os.makedirs(os.path.join(area, name))
        os.chmod(os.path.join(area, name), 0o1777)
    return area


def _loopback_up() -> None:
    """Bring up `lo` in the new network namespace (a notebook kernel talks to its client on it)."""
    SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, SIOCGIFFLAGS, ifreq))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))
