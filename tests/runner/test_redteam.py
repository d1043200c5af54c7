"""Red team: hostile submissions, graded end to end by the real `grade`, at every isolation level.

Each attack is a lesson file whose functions return wrong answers, with a payload from
`submissions/redteam/` in front (patched comparisons, always-equal objects, `pytest.skip`,
forged records, killing the grader, daemons that rewrite the reports, terminal escapes and
markup); the same wrong file without the payload is the control. Beside them: planted
files (a FIFO, a folder, a symlink to the solution, a 200 MB file, non-UTF-8 bytes) and a
correct bystander (03_jit from solutions/). For every level the machine allows:

- no attacked file scores more than its control, and planted files score nothing;
- the bystander keeps full marks;
- the JSON and HTML reports are complete, name the level, and are unchanged after every
  process the submission started had time to act; no sandbox process is left;
- the installed grader is unchanged; the terminal shows no escape the submission printed.

`basic` (the judge/sandbox split alone, same user) runs only the attacks it is meant to
stop: the process-killing and report-rewriting payloads would, as root, reach the machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAYLOADS = Path(__file__).parent / "submissions" / "redteam"
ROOT_ONLY = os.geteuid() == 0

pytestmark = pytest.mark.slow

# lesson file -> payload (attacks that cannot run at `basic`: marked False)
ATTACKS = {
    "01_arrays": ("patch_comparisons", True),
    "04_vmap": ("always_equal", True),
    "05_pytrees": ("skip_and_exit", True),
    "10_checkpoint": ("fake_records", True),
    "02_grad": ("kill_everyone", False),
    "06_random": ("outlive", False),
}
PLANTED = (
    "ex1_dropout",
    "ex2_per_example_grads",
    "ex3_generic_mlp",
    "ex4_jit_speedup",
    "11_frameworks",
)
BYSTANDER = "03_jit"

_PREAMBLE = """
def _redteam_answer():
    found = globals()
    if "CALL_INSTEAD" in found:
        return found["CALL_INSTEAD"]()
    return found.get("RETURN_INSTEAD", 0.0)

"""


def wrong_answers(lesson: str, payload: str = "") -> str:
    """The stub with every `raise NotImplementedError(...)` replaced by a wrong answer."""
    stub = (ROOT / "exercises" / f"{lesson}.py").read_text()
    body = re.sub(r"raise NotImplementedError\(.*\)", "return _redteam_answer()", stub)
    return payload + _PREAMBLE + body


def build(folder: Path, *, attacks: dict[str, str], controls: bool = False) -> None:
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    for lesson, payload in attacks.items():
        text = "" if controls else (PAYLOADS / f"{payload}.payload.py").read_text() + "\n"
        (folder / f"{lesson}.py").write_text(wrong_answers(lesson, text))
    shutil.copy(ROOT / "solutions" / f"{BYSTANDER}.py", folder / f"{BYSTANDER}.py")
    if controls:
        return
    (folder / "jax.py").write_text(
        "raise SystemExit('a jax.py beside the lesson files was imported')\n"
    )
    os.mkfifo(folder / "ex4_jit_speedup.py")
    (folder / "11_frameworks.py").mkdir()
    (folder / "ex3_generic_mlp.py").symlink_to(ROOT / "solutions" / "ex3_generic_mlp.py")
    with open(folder / "ex1_dropout.py", "wb") as fh:
        fh.truncate(200 << 20)
    (folder / "ex2_per_example_grads.py").write_bytes(b"def f():\n    return '\xff\xfe\xc3\x28'\n")


def grade(
    folder: Path, out: Path, lessons: list[str], *extra: str
) -> tuple[subprocess.CompletedProcess[str], dict]:
    out.mkdir(parents=True, exist_ok=True)
    out.chmod(0o755)
    env = {**os.environ, "REDTEAM_OUT": str(out)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            str(folder),
            "--only",
            ",".join(lessons),
            "--json",
            str(out / "results.json"),
            "--html",
            str(out / "report.html"),
            "--no-color",
            "--jobs",
            "2",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=out,
        env=env,
    )
    assert (out / "results.json").is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc, json.loads((out / "results.json").read_text())


def scores(results: dict) -> dict[str, tuple[float, float, str]]:
    return {e["name"]: (e["score"], e["max_score"], e["status"]) for e in results["exercises"]}


def installed_grader() -> Path:
    """The grader package `grade` runs (site-packages in CI, the checkout when editable)."""
    out = subprocess.run(
        [sys.executable, "-c", "import grader; print(grader.__file__)"],
        capture_output=True,
        text=True,
        cwd="/",
        check=True,
    )
    return Path(out.stdout.strip()).parent


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        digest.update(str(path).encode() + path.read_bytes())
    return digest.hexdigest()


def sandbox_processes(out: Path) -> list[str]:
    """Processes of this run's sandboxes still alive: a sandbox uid and this run's environment
    (other tests grade at the same time, with sandboxes of their own)."""
    from grader.sandbox.isolation import UID_BASE

    marker = f"REDTEAM_OUT={out}".encode()
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and os.stat(f"/proc/{pid}").st_uid >= UID_BASE:
                with open(f"/proc/{pid}/environ", "rb") as fh:
                    if marker in fh.read().split(b"\0"):
                        found.append(pid)
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def control(tmp_path_factory) -> dict[str, tuple[float, float, str]]:
    base = tmp_path_factory.mktemp("control")
    base.chmod(0o755)
    folder = base / "submission"
    build(folder, attacks={k: v for k, (v, _) in ATTACKS.items()}, controls=True)
    _, results = grade(folder, base / "out", [*ATTACKS, BYSTANDER])
    return scores(results)


LEVELS = ["strict", "user", "basic"] if ROOT_ONLY else ["basic"]


@pytest.mark.parametrize("level", LEVELS)
def test_attacks_gain_nothing_and_reports_hold(tmp_path, control, level):
    tmp_path.chmod(0o755)
    attacks = {k: v for k, (v, any_level) in ATTACKS.items() if any_level or level != "basic"}
    folder = tmp_path / "submission"
    build(folder, attacks=attacks)
    installed = tree_digest(installed_grader())
    lessons = [*attacks, BYSTANDER, *PLANTED]
    proc, results = grade(folder, tmp_path / "out", lessons, "--isolation", level)

    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert results["isolation"]["level"] == level
    got = scores(results)
    assert sorted(got) == sorted(lessons), "every lesson file of the run is in the report"
    for lesson in attacks:
        assert got[lesson][0] <= control[lesson][0], (lesson, got[lesson], control[lesson])
        assert got[lesson][1] == control[lesson][1], f"{lesson}: the denominator changed"
    for lesson in PLANTED:
        assert got[lesson][0] == 0, (lesson, got[lesson])
    assert got[BYSTANDER][0] == got[BYSTANDER][1] > 0, got[BYSTANDER]
    for exercise in results["exercises"]:
        assert all(c["status"] != "skipped" for c in exercise["checks"]), exercise["name"]

    # Reports: complete, escaped, and still ours after the submission's processes had time to act.
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Content-Security-Policy" in html and "<script>alert" not in html
    assert "\x1b" not in proc.stdout
    before = ((tmp_path / "out" / "results.json").read_bytes(), html)
    time.sleep(6)
    after = (
        (tmp_path / "out" / "results.json").read_bytes(),
        (tmp_path / "out" / "report.html").read_text(),
    )
    assert after == before, "a report changed after grade returned"
    assert not _found_under("/tmp", "hacked")
    assert sandbox_processes(tmp_path / "out") == []
    assert tree_digest(installed_grader()) == installed, "the installed grader was modified"


def _found_under(root, prefix):
    """Paths under `root` whose name starts with `prefix` (folders other tests remove while
    this walks are skipped: os.walk ignores them)."""
    return [
        os.path.join(d, n)
        for d, dirs, files in os.walk(root)
        for n in dirs + files
        if n.startswith(prefix)
    ]
