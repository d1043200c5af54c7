"""One root cause, one message: checks failed by the same error at the same student line are
shown once, and checks waiting for a failed value check are listed under it (terminal, HTML)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from report_samples import GATE_MESSAGE, LOSS_MESSAGE, check, grouped_report

from grader.model import ExerciseResult, Report
from grader.reports import groups, html, terminal


@pytest.fixture(scope="module")
def grouped() -> Report:
    return grouped_report()


def test_terminal_shows_one_block_per_root_cause(grouped: Report) -> None:
    text = terminal.render(grouped, color=False)
    block = (
        "08_mlp > 4 checks failed because `loss_fn` raised TypeError at line 54:\n"
        "    loss_fn matches the reference (0/2)\n"
        "        your code raised TypeError: mul got incompatible shapes for broadcasting: "
        "(4, 10), (4, 3).\n"
        "          likely cause: the two sides of `*` at line 54 have shapes (4, 10) and (4, 3): "
        "on the last axis they have sizes 10 and 3, which differ and neither is 1, so they do not "
        "broadcast (shapes are matched from the last axis: each pair of sizes must be equal, or "
        "one of them 1)\n"
        "          fix: print the shapes of both sides (`x.shape`) and make them agree\n"
        "        in your code: 08_mlp.py:54: return -jnp.mean(jnp.sum(onehot * logp, axis=-1))\n"
        "        hint: How many classes do the logits have?\n"
        "    the same error failed 3 more checks (same message, see above):\n"
        "      - grads match jax.grad of the reference (0/2)\n"
        "      - train_step matches the reference (0/2)\n"
        "      - train lowers the loss (0/1)\n"
        "    2 more checks wait for these (not judged until they pass):\n"
        "      - loss_fn is pure (0/1, waits for: loss_fn matches the reference)\n"
        "      - train_step compiles once (0/2, waits for: train_step matches the reference)\n"
    )
    assert block in text
    # The full message once, the gate's message and the followers' hints not at all.
    assert text.count("mul got incompatible shapes") == 1
    assert "values are wrong" not in text
    assert "grads differentiate loss_fn" not in text
    assert "a hint nobody needs yet" not in text


def test_terminal_lists_gated_checks_under_their_value_check(grouped: Report) -> None:
    text = terminal.render(grouped, color=False)
    assert (
        "08_mlp > accuracy matches the reference (0/1)\n"
        "    values of accuracy(params, x, y)\n"
        "      expected: 0.75\n"
        "      observed: 0.25\n"
        "    hint: Which axis holds the classes?\n"
        "    1 more check waits for this one (not judged until it passes):\n"
        "      - accuracy compiles under jit (0/1)\n"
    ) in text
    # Two blocks, not nine: the grouped checks do not use up the "what to fix first" room.
    assert text.count("08_mlp > ") == 2


def test_points_stay_per_check(grouped: Report) -> None:
    (mlp,) = grouped.exercises
    assert mlp.score == 2.0 and mlp.max_score == 14.0
    text = terminal.render(grouped, color=False)
    assert text.splitlines()[0] == "FAIL        2/14  08_mlp  a small MLP, trained"
    for c in mlp.checks:
        if c.status != "passed":
            assert f"{c.name} ({c.score:g}/{c.max_score:g}" in text


class _Items(HTMLParser):
    """Each check's <li>: its id, classes, and the ids of the <li>s nested in it."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.classes: dict[str, str] = {}
        self.parent: dict[str, str | None] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "li":
            a = dict(attrs)
            ident = a.get("id") or ""
            self.classes[ident] = a.get("class") or ""
            self.parent[ident] = self.stack[-1] if self.stack else None
            self.stack.append(ident)

    def handle_endtag(self, tag: str) -> None:
        if tag == "li":
            self.stack.pop()


def test_html_groups_under_the_first_check(grouped: Report) -> None:
    page = html.render(grouped)
    items = _Items()
    items.feed(page)
    lead = "check-08_mlp-test_loss_fn_matches_the_reference"
    accuracy = "check-08_mlp-test_accuracy_matches_the_reference"
    assert items.parent[lead] is None and "grouped" in items.classes[lead].split()
    for follower in (
        "grads_match_jax_grad_of_the_reference",
        "train_step_matches_the_reference",
        "train_lowers_the_loss",
        "loss_fn_is_pure",
        "train_step_compiles_once",
    ):
        ident = f"check-08_mlp-test_{follower}"
        assert items.parent[ident] == lead, ident
        assert "brief" in items.classes[ident].split()
    assert items.parent["check-08_mlp-test_accuracy_compiles_under_jit"] == accuracy
    assert items.parent[accuracy] is None
    # Every check still has its own line (and anchor) and its own points.
    assert len(items.classes) == len(grouped.exercises[0].checks)
    assert (
        '<div class="group-head">4 checks failed because `loss_fn` raised TypeError at line 54'
        "</div>" in page
    )
    assert '<div class="label">the same error failed 3 more checks</div>' in page
    assert (
        '<div class="label">2 more checks wait for these (not judged until they pass)</div>' in page
    )
    assert (
        '<div class="label">1 more check waits for this one (not judged until it passes)</div>'
        in page
    )
    assert "same error as: loss_fn matches the reference" in page
    assert "waits for: train_step matches the reference" in page
    # The full message once; the gate's own message and the followers' hints are not repeated.
    assert page.count("mul got incompatible shapes") == 1
    assert "values are wrong" not in page
    assert "a hint nobody needs yet" not in page
    assert re.search(r'<span class="pts">0/2</span>', page)
    assert "<script" not in page and 'http-equiv="Content-Security-Policy"' in page


def _exercise(*checks: object) -> ExerciseResult:
    return ExerciseResult(name="03_jit", title="", status="failed", checks=checks)  # type: ignore[arg-type]


def test_a_single_check_with_a_root_cause_is_not_a_group() -> None:
    one = check("a", status="failed", message=LOSS_MESSAGE, root_cause="TypeError|03_jit.py|3|f")
    (entry,) = groups.entries(_exercise(one))
    assert not entry.grouped and entry.same_cause == () and entry.cause is None


def test_different_lines_are_different_causes() -> None:
    a = check("a", status="failed", message="x", root_cause="TypeError|03_jit.py|3|f")
    b = check("b", status="failed", message="x", root_cause="TypeError|03_jit.py|4|f")
    assert [e.check.name for e in groups.entries(_exercise(a, b))] == ["a", "b"]


def test_a_gated_check_whose_value_check_passed_is_shown_on_its_own() -> None:
    value = check("f values")
    gated = check("f jit", status="failed", message=GATE_MESSAGE.format("x"), blocked_by=value.id)
    assert [(e.check.name, e.waiting) for e in groups.entries(_exercise(value, gated))] == [
        ("f values", ()),
        ("f jit", ()),
    ]
    assert "03_jit > f jit (0/2)" in terminal.render(
        Report(exercises=(_exercise(value, gated),), seed=0, submission="", grader_version=""),
        color=False,
    )


def test_gates_naming_unknown_or_cyclic_checks_do_not_hide_anything() -> None:
    a = check("a", status="failed", message="m", blocked_by="test_b")
    b = check("b", status="failed", message="m", blocked_by="test_a")
    c = check("c", status="failed", message="m", blocked_by="test_nowhere")
    shown = [e.check.name for e in groups.entries(_exercise(a, b, c))]
    assert shown == ["a", "b", "c"]


def test_headline_names_another_file_and_code_at_module_level() -> None:
    a = check("a", status="failed", message="m", root_cause="ValueError|helpers/util.py|9|")
    b = check("b", status="failed", message="m", root_cause="ValueError|helpers/util.py|9|")
    ex = _exercise(a, b)
    (entry,) = groups.entries(ex)
    assert groups.cause_headline(ex, entry) == (
        "2 checks failed because your code raised ValueError at util.py line 9"
    )
