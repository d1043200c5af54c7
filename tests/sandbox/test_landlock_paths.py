"""Landlock's allow-list where users install: a venv's `lib64 -> lib` and other links.

`python3 -m venv` makes `lib64` a symbolic link to `lib`. The allow-list opens the
installation child by child around the masked hidden suites; a rule added for the link
`lib64` is a rule for its target, all of `lib`, suites included (a Landlock'd
sandbox read `test_01_arrays.py` through it). Each case builds the layout in the test's
folder, confines a forked process with the rules `confine_files` would give, and tries to
read the suites by every path that leads there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.sandbox import landlock

pytestmark = pytest.mark.skipif(landlock.abi() == 0, reason="no Landlock in this kernel")

CONFINED = """
import json, os, sys
from grader.sandbox import landlock
readable, masked, tries = json.loads(sys.argv[1])
landlock.confine(readable=readable, writable=(), masked=masked)
seen = {}
for path in tries:
    try:
        if path.startswith("import:"):  # a module found by the import system in that folder
            sys.path.insert(0, path[len("import:"):])
            seen[path] = __import__("a_library").NAME
            continue
        with open(path) as fh:
            seen[path] = fh.read()
    except (OSError, ImportError) as exc:
        seen[path] = type(exc).__name__
print(json.dumps(seen))
"""


def venv_layout(base: Path) -> tuple[Path, Path]:
    """A venv's installation in `base`: lib/.../site-packages/grader with its suites, lib64 ->
    lib, a folder linked into site-packages (as a `.pth` or an editable install may), and a
    link that points straight at the suites. Returns (the venv, the suites)."""
    venv = base / "venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    suites = site / "grader" / "suites"
    suites.mkdir(parents=True)
    (suites / "test_01_arrays.py").write_text("hidden checks\n")
    (site / "grader" / "client.py").write_text("the grader's public code\n")
    (site / "numpy.py").write_text("NAME = 'a library'\n")
    (site / "a_library.py").write_text("NAME = 'a library'\n")
    (venv / "lib64").symlink_to("lib")
    (venv / "bin").mkdir()
    (venv / "bin" / "to_suites").symlink_to(suites)
    (venv / "bin" / "to_site").symlink_to(site)
    return venv, suites


def confined_reads(readable: list[str], masked: list[str], tries: list[str]) -> dict[str, str]:
    proc = subprocess.run(
        [sys.executable, "-c", CONFINED, json.dumps([readable, masked, tries])],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_no_rule_covers_a_masked_folder_through_a_link(tmp_path):
    venv, suites = venv_layout(tmp_path)
    rules = landlock._rules([str(venv)], [str(suites)])
    assert all(os.path.realpath(p) == p for p, _ in rules), rules  # rules name resolved paths
    paths = [path for path, kind in rules if kind is True]  # the rules that read below them
    for path in paths:  # none holds the suites (a rule on `lib64` would be one on `lib`)
        assert not str(suites).startswith(path.rstrip(os.sep) + os.sep), path
        assert path != str(suites)
    assert str(venv / "lib" / "python3.11" / "site-packages" / "numpy.py") in paths


def test_a_confined_process_reads_the_installation_but_never_the_suites(tmp_path):
    venv, suites = venv_layout(tmp_path)
    site = venv / "lib" / "python3.11" / "site-packages"
    hidden = [
        suites / "test_01_arrays.py",
        venv / "lib64" / "python3.11" / "site-packages" / "grader" / "suites" / "test_01_arrays.py",
        venv / "bin" / "to_suites" / "test_01_arrays.py",
        venv / "bin" / "to_site" / "grader" / "suites" / "test_01_arrays.py",
        Path(f"/proc/self/root{suites}") / "test_01_arrays.py",
    ]
    public = [
        site / "numpy.py",
        f"import:{site}",  # Python's import system lists the folder beside the masked one
        venv / "lib64" / "python3.11" / "site-packages" / "numpy.py",
        site / "grader" / "client.py",
    ]
    readable = [*sys.path, str(Path(landlock.__file__).parents[2]), sys.prefix, sys.base_prefix]
    readable = [p for p in readable if p and os.path.isabs(p)] + ["/usr", "/lib", "/proc"]
    readable.append(str(venv))
    seen = confined_reads(readable, [str(suites)], [str(p) for p in hidden + public])
    for path in hidden:
        assert seen[str(path)] == "PermissionError", (path, seen[str(path)])
    for path in public:
        assert seen[str(path)] not in ("PermissionError", "ModuleNotFoundError"), (path, seen)
    assert seen[f"import:{site}"] == "a library"


REFUSED = """
import sys
from grader.sandbox import isolation, landlock
for _ in range(16):  # Landlock stacks at most 16 rulesets: the kernel refuses a 17th
    landlock.confine(readable=("/",), writable=("/",))
plan = isolation.Plan(uid=0, writable=(), readable=(sys.prefix,), masked=(), newroot="")
try:
    isolation.confine_files(plan)
except isolation.ConfinementFailed as exc:
    print("refused:", exc)
else:
    print("confined")
"""


def test_a_refused_confinement_stops_the_sandbox_rather_than_pass_unconfined():
    """Issue 33: `confine_files` returned False when the kernel refused the rules, and the
    sandbox went on at a level whose confinement the report still claimed."""
    proc = subprocess.run(
        [sys.executable, "-c", REFUSED], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("refused: the grader could not confine"), proc.stdout
    assert "nothing of the student's ran" in proc.stdout
