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

Every payload aims only at what the test hands it (`REDTEAM_TARGETS`, written in front of it):
a decoy folder of records and reports inside the test's own folder, a decoy process the test
started, the run's report folder, the installed grader. At `strict` and `user` the decoys come
through unchanged; at `basic`, which confines nothing, the forged records reach the decoy
folder (the payload works) and still gain nothing. No payload names a machine-wide place;
`tests/conftest.py` guards canaries in `/tmp`, `/var/tmp` and the home folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.sandbox import landlock

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


def build(
    folder: Path,
    *,
    attacks: dict[str, str],
    controls: bool = False,
    targets: dict[str, object] | None = None,
) -> None:
    """`targets`: what the payloads may aim at (`REDTEAM_TARGETS`): `folders`, `pids`, `grader`."""
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    aimed = (
        f"REDTEAM_TARGETS = {json.dumps(targets or {'folders': [], 'pids': [], 'grader': ''})}\n"
    )
    for lesson, payload in attacks.items():
        text = "" if controls else aimed + (PAYLOADS / f"{payload}.payload.py").read_text() + "\n"
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


REAPER = Path(__file__).parent / "reaper.py"
LINGER_S = 6.0  # the outlive payload's daemon acts 4 s after the grading


def grade(
    folder: Path, out: Path, lessons: list[str], *extra: str, watch: bool = False
) -> tuple[subprocess.CompletedProcess[str], dict]:
    """Grade `folder` with the real `grade`. With `watch`, under `reaper.py`: the reports are
    watched for LINGER_S after `grade` returned, and `out/reaper.json` says what changed and
    which processes of this run were left behind."""
    out.mkdir(parents=True, exist_ok=True)
    out.chmod(0o755)
    command = [
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
    ]
    if watch:
        reports = f"{out / 'results.json'}:{out / 'report.html'}"
        command = [
            sys.executable, str(REAPER), str(out / "reaper.json"), str(LINGER_S), reports, "--",
            *command,
        ]  # fmt: skip
    proc = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=900,
        cwd=out,
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


@pytest.fixture(scope="module")
def control(tmp_path_factory) -> dict[str, tuple[float, float, str]]:
    base = tmp_path_factory.mktemp("control")
    base.chmod(0o755)
    folder = base / "submission"
    build(folder, attacks={k: v for k, (v, _) in ATTACKS.items()}, controls=True)
    _, results = grade(folder, base / "out", [*ATTACKS, BYSTANDER])
    return scores(results)


LEVELS = ["strict", "user", "basic"] if ROOT_ONLY else ["basic"]


DECOYS = {
    "history.jsonl": '{"decoy": "a run history the payloads may aim at"}\n',
    "results.json": '{"decoy": "a report the payloads may aim at"}\n',
    "report.html": "<p>a decoy report</p>\n",
}


def decoy_folder(base: Path) -> Path:
    """Records and reports of the grader's names inside the test's folder, for the payloads."""
    folder = base / "decoy"
    folder.mkdir()
    folder.chmod(0o755)
    for name, text in DECOYS.items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o644)
    return folder


@pytest.mark.parametrize("level", LEVELS)
def test_attacks_gain_nothing_and_reports_hold(tmp_path, control, level):
    tmp_path.chmod(0o755)
    attacks = {k: v for k, (v, any_level) in ATTACKS.items() if any_level or level != "basic"}
    folder = tmp_path / "submission"
    decoys = decoy_folder(tmp_path)
    bystander = subprocess.Popen(["sleep", "900"], start_new_session=True)  # a decoy process
    try:
        targets = {
            "folders": [str(decoys), str(tmp_path / "out")],
            "pids": [bystander.pid],
            "grader": str(installed_grader()),
        }
        build(folder, attacks=attacks, targets=targets)
        installed = tree_digest(installed_grader())
        lessons = [*attacks, BYSTANDER, *PLANTED]
        proc, results = grade(folder, tmp_path / "out", lessons, "--isolation", level, watch=True)
        alive = bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()

    reaped = json.loads((tmp_path / "out" / "reaper.json").read_text())
    assert reaped["returncode"] in (0, 1), proc.stderr[-3000:]
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
    assert reaped["changed"] == [], "a report changed after grade returned"
    assert reaped["leftover"] == [], "processes of the grading outlived it"
    assert tree_digest(installed_grader()) == installed, "the installed grader was modified"

    # The decoys: untouched where the level confines the sandbox; at `basic` without Landlock,
    # which confines nothing, the forged records reach them (the payload works) and, above,
    # still gained nothing.
    now = {name: (decoys / name).read_text() for name in DECOYS}
    if level == "basic" and landlock.abi() == 0:  # the grader's own user, nothing else
        assert now["history.jsonl"] != DECOYS["history.jsonl"], "the payload did not run"
        assert '"status": "passed"' in now["history.jsonl"]
    else:  # another user, or Landlock (grader.sandbox.landlock) at any level
        assert now == DECOYS, "the sandbox wrote into the test's decoy folder"
        assert alive, "the sandbox killed a process it was handed"
