"""The HTML page leads with what to fix: one line per root cause, each a link to its place,
and the sections of lesson files with nothing to fix start folded."""

from __future__ import annotations

from dataclasses import replace
from html.parser import HTMLParser

import pytest
from report_samples import check, grouped_report

from grader.model import ExerciseResult, NextStep, Report, SourceLine
from grader.reports import html


class Page(HTMLParser):
    """Ids, the links of the "What to fix" card (href, text), and each fold's open state."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.links: list[tuple[str, str]] = []
        self.folds: dict[str, bool] = {}  # exercise section id -> its <details> is open
        self.order: list[str] = []  # ids of the top-level cards, in page order
        self._section = ""
        self._in_fix = 0  # depth inside the summary card
        self._link: list[str] | None = None
        self._href = ""
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(a["id"] or "")
        if tag == "section":
            self._section = a.get("id") or ""
            self.order.append(self._section)
        if tag == "details" and "fold" in (a.get("class") or "").split():
            self.folds[self._section] = "open" in a
        if self._section == "to-fix" and tag == "a":
            self._href, self._link = a.get("href") or "", []

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._link is not None:
            self.links.append((self._href, "".join(self._link)))
            self._link = None
        if tag == "section":
            self._section = ""

    def handle_data(self, data: str) -> None:
        if self._link is not None:
            self._link.append(data)


def _check_links(parsed: Page) -> list[tuple[str, str]]:
    return [(h, t) for h, t in parsed.links if h.startswith("#check-")]


def test_every_summary_link_resolves_to_an_element(report: Report) -> None:
    for sample in (report, grouped_report()):
        parsed = Page(html.render(sample))
        assert parsed.links, "the summary has no links"
        for href, text in parsed.links:
            assert href.startswith("#") and href[1:] in parsed.ids, (href, text)


def test_the_summary_comes_first(report: Report) -> None:
    order = Page(html.render(report)).order
    assert order[1] == "to-fix"  # right after the total score
    assert order.index("to-fix") < min(i for i, s in enumerate(order) if s.startswith("ex-"))


def test_one_line_per_root_cause() -> None:
    parsed = Page(html.render(grouped_report()))
    assert _check_links(parsed) == [
        (
            "#check-08_mlp-test_loss_fn_matches_the_reference",
            "4 checks failed because `loss_fn` raised TypeError at line 54",
        ),
        ("#check-08_mlp-test_accuracy_matches_the_reference", "accuracy matches the reference"),
    ]
    assert [(h, t) for h, t in parsed.links if h.startswith("#ex-")] == [("#ex-08_mlp", "08_mlp")]
    page = html.render(grouped_report())
    # the group stands for its 4 checks and the 2 waiting for them: 2+2+2+1 + 1+2 points
    assert "2 more checks wait for it" in page and "1 more check waits for it" in page
    assert '<td class="num muted">10 pts</td>' in page


def test_problems_of_a_whole_file_and_untouched_files(report: Report) -> None:
    page = html.render(report)
    parsed = Page(page)
    files = [(h, t) for h, t in parsed.links if h.startswith("#ex-") and t == h[4:]]
    assert files == [
        ("#ex-03_jit", "03_jit"),
        ("#ex-04_vmap", "04_vmap"),
        ("#ex-06_random", "06_random"),
    ]
    assert ("#ex-04_vmap", "a problem stopped the grading of this file") in parsed.links
    assert ("#ex-06_random", "not attempted yet: start with its first TODO") in parsed.links
    assert [t for _, t in _check_links(parsed)] == [
        "running_sum uses lax.scan",
        "newton_sqrt converges for a in [1e-2, 1e4]",
        "newton_sqrt traces once",
    ]
    assert "2 checks not judged because of it" in page
    assert page.count('<span class="start">start here</span>') == 1
    # The summary names; it does not repeat what each place shows.
    assert page.count("SyntaxError: invalid syntax (04_vmap.py, line 7)") == 1


def test_files_with_nothing_to_fix_start_folded(report: Report) -> None:
    folds = Page(html.render(report)).folds
    assert folds == {
        "ex-01_arrays": False,
        "ex-03_jit": True,
        "ex-04_vmap": True,
        "ex-06_random": True,
        "ex-11_frameworks": False,
        "ex-ex4_jit_speedup": False,
    }


def test_a_passed_file_with_a_failed_check_stays_open() -> None:
    ex = ExerciseResult(
        name="01_arrays",
        title="",
        status="passed",
        checks=(check("a"), check("b", status="failed", message="m")),
    )
    report = Report(exercises=(ex,), seed=0, submission=".", grader_version="0")
    assert Page(html.render(report)).folds == {"ex-01_arrays": True}


def test_nothing_to_fix() -> None:
    ex = ExerciseResult(name="01_arrays", title="", status="passed", checks=(check("a"),))
    page = html.render(Report(exercises=(ex,), seed=0, submission=".", grader_version="0"))
    assert "Nothing to fix: every check that ran passed." in page
    assert Page(page).links == []


def _helped(status: str = "failed", **help: str) -> str:
    c = check("f works", status=status, message="m", hint="a question?", **help)
    ex = ExerciseResult(name="03_jit", title="", status="failed", checks=(c,))
    return html.render(Report(exercises=(ex,), seed=0, submission=".", grader_version="0"))


@pytest.mark.parametrize(
    ("fix", "status", "shown"),
    [
        ("use jax.lax.scan(step, 0.0, xs) <b>", "failed", True),
        ("", "failed", False),  # held back by the hint policy
        ("use jax.lax.scan", "passed", False),
    ],
)
def test_a_fix_is_shown_when_the_model_holds_one(fix: str, status: str, shown: bool) -> None:
    page = _helped(status, fix=fix)
    assert ('<div class="fix"><b>Fix:</b>' in page) is shown
    if shown:
        assert "use jax.lax.scan(step, 0.0, xs) &lt;b&gt;</div>" in page


def test_the_nudge_comes_between_the_question_and_the_fix() -> None:
    page = _helped(nudge="what does scan return?", fix="carry = step(carry, x)")
    question = page.index("<b>Hint:</b> a question?")
    nudge = page.index('<div class="hint nudge"><b>Nudge:</b> what does scan return?</div>')
    assert question < nudge < page.index("<b>Fix:</b> carry = step(carry, x)")
    assert "Nudge:" not in _helped()


def test_revealed_hints_are_counted_on_the_check() -> None:
    c = check("f works", status="failed", message="m", nudge="n", hints_revealed=1)
    ex = ExerciseResult(name="03_jit", title="", status="failed", checks=(c,))
    page = html.render(Report(exercises=(ex,), seed=0, submission=".", grader_version="0"))
    assert '<span class="badge tag revealed">1 hint revealed</span>' in page
    assert "revealed</span>" not in _helped()


def test_stuck_points_to_grade_hint(report: Report) -> None:
    page = html.render(report)
    assert (
        "Stuck on 03_jit? <code>grade hint 03_jit</code> shows more help for its first "
        "failing check." in page
    )


def test_an_untouched_file_says_where_to_start(report: Report) -> None:
    todo = SourceLine(path="06_random.py", line=12, code="    raise NotImplementedError  # TODO")
    step = NextStep(command="grade exercises/06_random.py", todo=todo)
    exercises = tuple(
        replace(e, next=step) if e.name == "06_random" else e for e in report.exercises
    )
    page = html.render(replace(report, exercises=exercises))
    parsed = Page(page)
    assert (
        "#next-06_random",
        "not attempted yet: start at its first TODO, line 12",
    ) in parsed.links
    assert "next-06_random" in parsed.ids
    assert '<span class="lineno">12</span>    raise NotImplementedError  # TODO</pre>' in page
    assert "<p>Then run <code>grade exercises/06_random.py</code>.</p>" in page


def test_at_full_marks_the_next_lesson_file() -> None:
    step = NextStep(command="grade exercises/02_grad.py", lesson="02_grad")
    ex = ExerciseResult(
        name="01_arrays", title="", status="passed", checks=(check("a"),), next=step
    )
    page = html.render(Report(exercises=(ex,), seed=0, submission=".", grader_version="0"))
    assert (
        "Nothing to fix: every check that ran passed. Next: go on with <b>02_grad</b>, "
        "<code>grade exercises/02_grad.py</code>." in page
    )


def test_the_summary_escapes_what_the_student_wrote() -> None:
    key = "TypeError|03_jit.py|3|<script>f</script>"
    a = check("a", status="failed", message="m", root_cause=key)
    b = check("b", status="failed", message="m", root_cause=key)
    ex = ExerciseResult(name="03_jit", title="", status="failed", checks=(a, b))
    page = html.render(Report(exercises=(ex,), seed=0, submission=".", grader_version="0"))
    assert "<script" not in page
    assert "2 checks failed because `&lt;script&gt;f&lt;/script&gt;` raised TypeError" in page


def test_fixes_of_a_skipped_file_are_none(report: Report) -> None:
    skipped = next(e for e in report.exercises if e.status == "skipped")
    assert html.fixes(skipped) == ()
    assert html.fixes(replace(skipped, status="passed", message="")) == ()
