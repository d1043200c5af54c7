"""The Gradescope bundle as Gradescope runs it: `setup.sh` in a fresh environment, then
`run_autograder` on an upload, in the documented layout (`source/`, `submission/`,
`results/results.json`) under the test's folder (AUTOGRADER_ROOT), never /autograder.

The environment is Ubuntu-like: the venv is made from the system's Python
(/usr/bin/python3, AUTOGRADER_BASE_PYTHON, so setup.sh runs no apt-get), and pip has no
index, only a folder of wheels (PIP_NO_INDEX, PIP_FIND_LINKS: pip's own settings, as
Gradescope's pip would have an index). No network here, so that folder is made from this
environment's installed distributions, each repacked as a wheel from the files its RECORD
lists; the bundle's lock is made with it as `--wheelhouse`, so every pin carries the
hashes of those wheels and setup.sh installs them in pip's hash-checking mode, then runs
`pip check`. A pin the folder does not hold, a hash that differs or a lock that misses a
requirement fails setup.sh.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from conftest import FIXTURES, SUITES
from packaging.utils import canonicalize_name

from grader.course import gradescope_bundle, lock

SYSTEM_PYTHON = Path("/usr/bin/python3")
ALICE = FIXTURES / "submissions" / "alice"
DROPPED = ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def repack(name: str, house: Path) -> Path:
    """The installed distribution `name` as a wheel in `house`: the files its RECORD lists
    in site-packages (not its scripts: pip writes them again from entry_points.txt)."""
    dist = metadata.distribution(name)
    base = Path(str(dist.locate_file("")))
    files = [f for f in dist.files or [] if f.parts[0] != ".." and "__pycache__" not in f.parts]
    info = next(f.parts[0] for f in files if f.parts[0].endswith(".dist-info"))
    wheel_meta = (base / info / "WHEEL").read_text() if (base / info / "WHEEL").is_file() else ""
    tags = [t.split("-") for t in re.findall(r"^Tag: (\S+)$", wheel_meta, re.MULTILINE)]
    parts = [".".join(sorted({t[i] for t in tags})) for i in range(3)] if tags else []
    tag = "-".join(parts) if parts else "py3-none-any"
    stem = re.sub(r"[-_.]+", "_", dist.metadata["Name"])
    out = house / f"{stem}-{dist.version}-{tag}.whl"
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as wheel:
        for f in files:
            path = base / f
            if not path.is_file() or (f.parts[0] == info and f.name in DROPPED):
                continue
            data = path.read_bytes()
            wheel.writestr(f.as_posix(), data)
            writer.writerow([f.as_posix(), _record_hash(data), len(data)])
        writer.writerow([f"{info}/RECORD", "", ""])
        wheel.writestr(f"{info}/RECORD", record.getvalue())
    return out


def system_python_refused() -> str:
    """Why the system's Python cannot stand in for Gradescope's here ("" when it can)."""
    if not SYSTEM_PYTHON.is_file():
        return f"{SYSTEM_PYTHON} does not exist"
    proc = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import ensurepip, sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        return f"{SYSTEM_PYTHON} cannot make a venv with pip (no ensurepip: python3-venv)"
    if proc.stdout.strip() != lock.python_version():
        return (
            f"{SYSTEM_PYTHON} is Python {proc.stdout.strip()}; the lock made here is for "
            f"{lock.python_version()}, and setup.sh rightly refuses another"
        )
    return ""


@pytest.mark.slow
def test_setup_installs_the_hashed_lock_and_run_autograder_grades_an_upload(
    tmp_path: Path,
) -> None:
    refused = system_python_refused()
    if refused:
        pytest.skip(refused)
    try:
        pins = lock.closure()
    except lock.LockError as exc:
        pytest.skip(f"this environment cannot be locked: {exc}")
    house = tmp_path / "wheels"
    house.mkdir()
    for name in pins:
        repack(name, house)
    course = tmp_path / "course"  # no committed lock: made from this environment
    course.mkdir()
    bundle = tmp_path / "autograder.zip"
    built = gradescope_bundle.build(bundle, SUITES, extras="", require_isolation="basic",
                                    course_dir=course, wheelhouse=house)  # fmt: skip
    assert "with hashes" in built.lock
    root = tmp_path / "autograder"
    with zipfile.ZipFile(bundle) as zipped:
        zipped.extractall(root / "source")
        text = zipped.read(lock.LOCK_FILE).decode()
    assert text.count("--hash=sha256:") == len(pins)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL"))}
    env.update(AUTOGRADER_ROOT=str(root), AUTOGRADER_BASE_PYTHON=str(SYSTEM_PYTHON),
               PIP_NO_INDEX="1", PIP_FIND_LINKS=str(house), PIP_NO_CACHE_DIR="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1", TMPDIR=str(tmp_path))  # fmt: skip
    env["PATH"] = "/usr/bin:/bin"  # the system's tools, not this environment's
    proc = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    python = root / "venv" / "bin" / "python"
    freeze = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], env=env,
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    installed = {canonicalize_name(d["name"]): d["version"] for d in json.loads(freeze)}
    assert {n: installed.get(n) for n in pins} == pins  # exactly the lock's versions
    assert installed["jax-lesson-grader"] and set(installed) - set(pins) <= {
        "jax-lesson-grader",
        "pip",
    }
    (root / "submission").mkdir()
    shutil.copyfile(ALICE / "01_sums.py", root / "submission" / "01_sums (1).py")
    shutil.copyfile(ALICE / "02_words.py", root / "submission" / "02_words.py")
    proc = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 12, results
    assert "01_sums (1).py is graded as 01_sums.py" in results["output"]


@pytest.mark.slow
def test_pip_refuses_a_wheel_whose_hash_the_lock_does_not_hold(tmp_path: Path) -> None:
    refused = system_python_refused()
    if refused:
        pytest.skip(refused)
    house = tmp_path / "wheels"
    house.mkdir()
    requires = lambda extras: [lock.Requirement("markupsafe")]  # noqa: E731
    for name in lock.closure(own=requires):
        repack(name, house)
    (tmp_path / lock.LOCK_FILE).write_text(lock.generate(wheelhouse=house, own=requires).text())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL"))}
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(house), PIP_NO_CACHE_DIR="1",
               PIP_DISABLE_PIP_VERSION_CHECK="1", TMPDIR=str(tmp_path))  # fmt: skip

    def install(venv: str) -> subprocess.CompletedProcess[str]:
        subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", str(tmp_path / venv)], check=True)
        return subprocess.run([str(tmp_path / venv / "bin" / "python"), "-m", "pip", "install",
                               "--no-deps", "-r", str(tmp_path / lock.LOCK_FILE)],
                              env=env, capture_output=True, text=True, timeout=300)  # fmt: skip

    assert install("good").returncode == 0
    wheel = next(house.glob("[Mm]arkup[Ss]afe-*.whl"))
    with zipfile.ZipFile(wheel, "a") as tampered:
        tampered.writestr("markupsafe/planted.py", "print('not what the course ran')\n")
    proc = install("bad")
    assert proc.returncode != 0 and "DO NOT MATCH THE HASHES" in proc.stderr, proc.stderr


def test_setup_refuses_a_python_other_than_the_locks(tmp_path: Path) -> None:
    bundle = tmp_path / "autograder.zip"
    gradescope_bundle.build(bundle, SUITES, extras="", course_dir=tmp_path)
    with zipfile.ZipFile(bundle) as zipped:
        setup = zipped.read("setup.sh").decode()
    other = tmp_path / "python"
    other.write_text("#!/bin/sh\necho 2.7\n")
    other.chmod(0o755)
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "source" / "setup.sh").write_text(setup)
    proc = subprocess.run(
        ["bash", str(root / "source" / "setup.sh")],
        env={
            "PATH": "/usr/bin:/bin",
            "AUTOGRADER_ROOT": str(root),
            "AUTOGRADER_BASE_PYTHON": str(other),
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert f"requirements.lock is for Python {lock.python_version()}" in proc.stderr
    assert not (root / "venv").exists()
