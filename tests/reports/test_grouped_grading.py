"""The grouped-failure output from a real grading: an 08_mlp whose `forward` multiplies by the
transposed weights (`x @ w.T`) raises the same TypeError at the same line in every check that
calls it. Graded by the real `grade` command in a subprocess: the terminal shows one block
for that error (the first check in full, the others one line each) with the gated checks under
it, the HTML nests them under that check, and the results JSON carries the keys."""

from __future__ import annotations

import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SOLUTION = REPO / "solutions" / "08_mlp.py"
RIGHT = 'x = x @ layer["w"] + layer["b"]'
WRONG = 'x = x @ layer["w"].T + layer["b"]'


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict, str, int]:  # type: ignore[type-arg]
    folder = tmp_path_factory.mktemp("transposed") / "lesson"
    folder.mkdir()
    source = SOLUTION.read_text(encoding="utf-8")
    assert source.count(RIGHT) == 1
    (folder / "08_mlp.py").write_text(source.replace(RIGHT, WRONG), encoding="utf-8")
    line = next(i for i, text in enumerate(source.splitlines(), 1) if RIGHT in text)
    out = folder.parent
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            str(folder),
            "--only",
            "08_mlp",
            "--no-color",
            "--json",
            str(out / "results.json"),
            "--html",
            str(out / "report.html"),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=out,
    )
    assert (out / "results.json").exists(), run.stdout + run.stderr
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return run.stdout, doc, (out / "report.html").read_text(encoding="utf-8"), line


def _checks(doc: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    (exercise,) = doc["exercises"]
    return {c["id"]: c for c in exercise["checks"]}


def test_results_json_keys_the_shared_cause_and_the_gates(graded) -> None:  # type: ignore[no-untyped-def]
    _, doc, _, line = graded
    checks = _checks(doc)
    key = f"TypeError|08_mlp.py|{line}|forward"
    same = [i for i, c in checks.items() if c["root_cause"] == key]
    assert "test_forward_values" in same and "test_loss_value" in same and len(same) >= 5
    gated = [i for i, c in checks.items() if c["blocked_by"]]
    assert checks["test_forward_loss_jit_pure"]["blocked_by"] == "test_forward_values"
    assert all(checks[i]["status"] == "failed" and checks[i]["score"] == 0 for i in same + gated)


def test_terminal_shows_one_block_for_the_shared_cause(graded) -> None:  # type: ignore[no-untyped-def]
    stdout, doc, _, line = graded
    checks = _checks(doc)
    key = f"TypeError|08_mlp.py|{line}|forward"
    same = [c for c in checks.values() if c["root_cause"] == key]
    head = f"08_mlp > {len(same)} checks failed because `forward` raised TypeError at line {line}:"
    assert head in stdout, stdout
    block = stdout[stdout.index(head) :]
    # The first check in full, with the shapes named in the student's terms...
    assert "dot_general requires contracting dimensions" in block
    assert f"likely cause: `@` at line {line} sums over axes of different sizes" in block
    assert stdout.count("dot_general requires contracting dimensions") == 1
    assert f"in your code: 08_mlp.py:{line}: {WRONG}" in block
    # ...then every other one as one line with its own points.
    assert f"the same error failed {len(same) - 1} more checks (same message, see above):" in block
    for c in same[1:]:
        assert f"      - {c['name']} (0/{c['max_score']:g})\n" in block
    # The gated checks under it, one line each, saying what they wait for; no gate message.
    gated = [c for c in checks.values() if c["blocked_by"]]
    assert f"{len(gated)} more checks wait for these (not judged until they pass):" in block
    forward = checks["test_forward_values"]["name"]
    jit_pure = checks["test_forward_loss_jit_pure"]
    assert (
        f"      - {jit_pure['name']} (0/{jit_pure['max_score']:g}, waits for: {forward})" in block
    )
    assert "this property is judged once the values are right" not in stdout
    assert stdout.count("08_mlp > ") == 1


class _Nesting(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.parent: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "li":
            ident = dict(attrs).get("id") or ""
            self.parent[ident] = self.stack[-1] if self.stack else None
            self.stack.append(ident)

    def handle_endtag(self, tag: str) -> None:
        if tag == "li":
            self.stack.pop()


def test_html_nests_the_grouped_checks_under_the_first(graded) -> None:  # type: ignore[no-untyped-def]
    _, doc, page, line = graded
    checks = _checks(doc)
    nesting = _Nesting()
    nesting.feed(page)
    lead = "check-08_mlp-test_forward_values"
    assert nesting.parent[lead] is None
    for ident, c in checks.items():
        if (c["root_cause"] and ident != "test_forward_values") or c["blocked_by"]:
            assert nesting.parent[f"check-08_mlp-{ident}"] == lead, ident
    assert f"checks failed because `forward` raised TypeError at line {line}</div>" in page
    assert page.count("dot_general requires contracting dimensions") == 1
    assert 'http-equiv="Content-Security-Policy"' in page and "<script" not in page
