"""The course's lock file: every package the grading environment holds, pinned.

    requirements.lock   at the course's root; `grade gradescope-bundle`, `grade ci-template`
                        and `grade release` ship it, and their installs read it

A lock is made offline, from the environment the course grades in: the grader's
requirements (with the extras asked for, and what they require in turn) are walked through
the installed distributions' own metadata (`importlib.metadata`), and each is pinned to the
version installed here (`name==version`), with setuptools, which builds the grader from
its source. The grader itself is not pinned: it is installed from the bundle or repository.

- **Markers** (`; python_version < "3.11"`) are decided for this Python and platform, so a
  lock is for the Python major.minor it was made with: its header says which, and the
  Gradescope bundle installs that Python and refuses another.
- **Hashes**: with a wheelhouse (a folder of the wheel files: `pip download --no-deps -d
  wheels -r requirements.lock`, or the wheels the course already keeps), every pin carries
  the sha256 of each wheel there of its name and version, and pip installs in hash-checking
  mode. pip checks hashes for every package or for none, so a wheelhouse that lacks a
  pinned package is an error naming it. Without one, the lock pins versions only, and its
  header says so: the index is trusted to serve the same files for the same versions.
- A requirement that is not installed here, or not at a version it accepts, is an error:
  a lock of what the course never ran would pin a guess.

A course that commits its `requirements.lock` gets the same pins every term; when there is
none, the commands make one from the environment they run in and say so.
"""

from __future__ import annotations

import hashlib
import platform
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from grader.errors import GraderError

DISTRIBUTION = "jax-lesson-grader"
LOCK_FILE = "requirements.lock"
BUILD = ("setuptools>=70.1",)  # builds the grader's wheel on its own (no `wheel` needed)
_PYTHON = re.compile(r"^# python: (?P<version>\d+\.\d+)\s*$", re.MULTILINE)
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s\\;]+)")


class LockError(GraderError):
    """The lock cannot be made or read as asked; the message says what to install or fix."""


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    hashes: tuple[str, ...] = ()  # "sha256:..." of each wheel of it in the wheelhouse

    def line(self) -> str:
        return " \\\n    ".join(
            [f"{self.name}=={self.version}", *(f"--hash={h}" for h in self.hashes)]
        )


@dataclass(frozen=True)
class Lock:
    pins: tuple[Pin, ...]
    python: str  # "3.11": the Python the markers were decided for
    extras: tuple[str, ...]

    @property
    def hashed(self) -> bool:
        return bool(self.pins) and all(p.hashes for p in self.pins)

    def text(self) -> str:
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        how = (
            "every pin with the sha256 of its wheels: pip installs in hash-checking mode"
            if self.hashed
            else "versions only (no wheelhouse was given): the index is trusted for the files"
        )
        head = [
            f"# The grading environment of {DISTRIBUTION}{extras}, pinned: written by `grade`",
            "# from the course's installed environment (grader/course/lock.py says how).",
            f"# python: {self.python}",
            f"# platform: {sys.platform} {platform.machine()}",
            f"# hashes: {how}",
            f"# install: pip install --no-deps -r {LOCK_FILE}, then the grader with --no-deps",
        ]
        return "\n".join([*head, *(p.line() for p in self.pins)]) + "\n"


def python_version() -> str:
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def _applies(req: Requirement, extras: Iterable[str]) -> bool:
    """Whether `req` holds here with `extras` (evaluate() decides the markers for this
    interpreter, `extra` added)."""
    return req.marker is None or any(req.marker.evaluate({"extra": e}) for e in ("", *extras))


def _requires(dist: metadata.Distribution, extras: Iterable[str]) -> list[Requirement]:
    """What `dist` requires with `extras`, markers decided for this Python and platform."""
    found = []
    for line in dist.requires or []:
        try:
            req = Requirement(line)
        except InvalidRequirement as exc:
            raise LockError(f"{dist.metadata['Name']} declares {line!r}: {exc}") from None
        if _applies(req, extras):
            found.append(req)
    return found


def _installed(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def grader_requires(extras: Sequence[str]) -> list[Requirement]:
    """What the installed grader requires with `extras` (its `Requires-Dist`)."""
    grader = _installed(DISTRIBUTION)
    if grader is None:
        raise LockError(
            f"the {DISTRIBUTION} distribution is not installed, so its requirements are "
            "unknown: install the grader (`pip install .` in its repository) and run from there"
        )
    unknown = sorted(set(extras) - set(grader.metadata.get_all("Provides-Extra") or []))
    if unknown:
        raise LockError(f"{DISTRIBUTION} has no extra named {', '.join(unknown)}")
    return _requires(grader, extras)


def closure(
    extras: Sequence[str] = (),
    build: Sequence[str] = BUILD,
    own: Callable[[Sequence[str]], list[Requirement]] = grader_requires,
) -> dict[str, str]:
    """Every distribution the grader (with `extras`) needs, transitively, and the `build`
    requirements: canonical name -> installed version. `own(extras)` says what the grader
    itself requires (a self-referring extra, `jax-lesson-grader[cluster]`, asks it again).
    `LockError` names what is missing."""

    def wanted(extras: Sequence[str]) -> list[Requirement]:
        return [r for r in own(extras) if _applies(r, extras)]

    todo = [(r, DISTRIBUTION) for r in wanted(extras)]
    todo += [(Requirement(b), "the grader's build") for b in build]
    pinned: dict[str, str] = {}
    walked: set[tuple[str, frozenset[str]]] = {(DISTRIBUTION, frozenset(extras))}
    problems: list[str] = []
    while todo:
        req, wanted_by = todo.pop()
        name = canonicalize_name(req.name)
        key = (name, frozenset(req.extras))
        if name == DISTRIBUTION:
            if key not in walked:
                walked.add(key)
                todo += [
                    (r, f"{DISTRIBUTION}{sorted(req.extras)}") for r in wanted(sorted(req.extras))
                ]
            continue
        dist = _installed(req.name)
        if dist is None:
            problems.append(f"{req} (required by {wanted_by}) is not installed")
            continue
        version = dist.version
        if not req.specifier.contains(version, prereleases=True):
            problems.append(f"{req} (required by {wanted_by}): {version} is installed")
            continue
        if key in walked:
            continue
        walked.add(key)
        pinned[name] = version
        todo += [(r, f"{name} {version}") for r in _requires(dist, sorted(req.extras))]
    if problems:
        raise LockError(
            "the course's environment does not hold what the grader needs, so it cannot be "
            "pinned:\n  " + "\n  ".join(sorted(set(problems))) + "\ninstall it here (e.g. "
            "`pip install '.[EXTRAS]'` in the grader's repository) and try again"
        )
    return dict(sorted(pinned.items()))


def _wheel_key(path: Path) -> tuple[str, str] | None:
    """(canonical name, normalised version) of a wheel file's name, or None."""
    parts = path.name[: -len(".whl")].split("-")
    if not path.name.endswith(".whl") or len(parts) not in (5, 6):
        return None
    try:
        return canonicalize_name(parts[0]), str(Version(parts[1]))
    except InvalidVersion:
        return None


def _hashes(wheelhouse: Path) -> dict[tuple[str, str], list[str]]:
    if not wheelhouse.is_dir():
        raise LockError(f"--wheelhouse {wheelhouse}: no such folder")
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(wheelhouse.iterdir()):
        key = _wheel_key(path)
        if key is not None and path.is_file():
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            found.setdefault(key, []).append(f"sha256:{digest}")
    return found


def generate(
    extras: Sequence[str] = (),
    wheelhouse: Path | None = None,
    own: Callable[[Sequence[str]], list[Requirement]] = grader_requires,
) -> Lock:
    """The lock of this environment's grader with `extras` (see the module's docstring;
    `own` as for `closure`)."""
    pins = closure(extras, own=own)
    hashes = _hashes(wheelhouse) if wheelhouse is not None else {}
    if wheelhouse is not None:
        missing = [f"{n}=={v}" for n, v in pins.items() if (n, str(Version(v))) not in hashes]
        if missing:
            raise LockError(
                f"--wheelhouse {wheelhouse} has no wheel of {', '.join(missing)}; pip checks "
                "the hashes of every package or of none: add them (pip download --no-deps -d "
                f"{wheelhouse} NAME==VERSION) or leave --wheelhouse out"
            )
    return Lock(
        tuple(
            Pin(n, v, tuple(sorted(hashes.get((n, str(Version(v))), [])))) for n, v in pins.items()
        ),
        python_version(),
        tuple(sorted(extras)),
    )


@dataclass(frozen=True)
class Read:
    """A lock file as the commands use it: its text, verbatim, and the Python it is for."""

    text: str
    python: str
    pins: dict[str, str]


def read(path: Path) -> Read:
    """The lock at `path`; `LockError` unless every requirement in it is pinned (`==`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LockError(f"{path} could not be read: {exc.strerror}") from None
    return read_text(text, str(path))


def read_text(text: str, where: str = LOCK_FILE) -> Read:
    """A lock's `text` (see `read`; `where`: its name in messages)."""
    python = _PYTHON.search(text)
    pins: dict[str, str] = {}
    unpinned = []
    for line in text.replace("\\\n", " ").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "--hash")):
            continue
        found = _PIN.match(line)
        if found is None:
            unpinned.append(line)
        else:
            pins[canonicalize_name(found["name"])] = found["version"]
    if unpinned or python is None:
        raise LockError(
            f"{where} is not a lock `grade` can install from: "
            + (
                f"not pinned (name==version): {'; '.join(unpinned)}"
                if unpinned
                else "no `# python: X.Y` line says which Python it is for"
            )
            + ". Delete it and let `grade` write it again from the course's environment"
        )
    return Read(text, python["version"], pins)


def for_course(
    course: Path, extras: Sequence[str] = (), wheelhouse: Path | None = None
) -> tuple[Read, str]:
    """The course's committed `requirements.lock`, or one made from this environment (always
    when a `wheelhouse` is given: to hash its wheels), and a sentence saying which."""
    path = course / LOCK_FILE
    if path.is_file() and wheelhouse is None:
        return read(path), f"installs from the course's {path}"
    made = generate(extras, wheelhouse)
    pins = {p.name: p.version for p in made.pins}
    how = "with hashes" if made.hashed else "versions only"
    return Read(made.text(), made.python, pins), (
        f"installs from a lock of this environment ({len(pins)} packages pinned, {how}; "
        f"commit it as {LOCK_FILE} to keep the pins)"
    )
