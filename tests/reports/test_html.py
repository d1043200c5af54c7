"""The HTML page: self-contained, deterministic, and it escapes everything a student wrote."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from importlib import resources
from typing import Any

import pytest
from report_samples import sample_report

from grader.model import Report
from grader.reports import html


@pytest.fixture(scope="module")
def page(report: Report) -> str:
    return html.render(report)


def test_student_text_is_escaped(page: str) -> None:
    assert "<script" not in page  # neither the student's nor ours
    assert (
        "fix: carry the running total through jax.lax.scan &lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;"
        in page
    )
    assert "# &lt;b&gt;loop&lt;/b&gt;" in page  # the student's source line
    assert "red &lt;b&gt;bold&lt;/b&gt;" in page  # captured output


def test_self_contained(page: str) -> None:
    assert "http://" not in page and "https://" not in page
    assert not re.search(r'\b(?:src|href)="(?!data:|#)', page)
    assert "<link" not in page and "@import" not in page


def test_total_score_is_prominent(page: str) -> None:
    assert '<div class="total" id="total-score">13.5<span class="of"> / 26</span></div>' in page
    assert "<title>Grading report: 13.5/26</title>" in page
    assert "<b>51%</b> of the points" in page
    assert 'seed <b id="seed">1234</b>' in page


def test_each_exercise_has_a_section_with_badge_and_points(report: Report, page: str) -> None:
    for ex in report.exercises:
        assert f'<section class="card exercise" id="ex-{ex.name}">' in page
    assert '<span class="badge s-not_attempted">not attempted</span>' in page
    assert '<span class="badge s-timeout">timed out</span>' in page
    assert '<span class="pts">3.5/8</span>' in page
    assert (
        "04_vmap.py could not be imported:\n  SyntaxError: invalid syntax (04_vmap.py, line 7)"
        in page
    )


def test_checks_show_message_hint_location(page: str) -> None:
    assert '<pre class="message">the jaxpr of running_sum(xs)\n' in page
    assert "<b>Hint:</b> How does jax.lax.scan carry a value from one step to the next?" in page
    assert '<pre><span class="lineno">14</span>    for x in xs:' in page
    assert "in your code, <code>03_jit.py</code> line 14:" in page
    # A passed check's hint is not shown: it is for when something is wrong.
    assert "Is x still the same after the call?" not in page
    assert '<span class="badge tag">hidden</span>' in page


def test_an_import_error_is_shown_once(page: str) -> None:
    assert page.count("SyntaxError: invalid syntax (04_vmap.py, line 7)") == 1
    assert '<span class="muted">stopped by the problem above</span>' in page
    assert '<span class="muted">not run: 04_vmap.py does not import</span>' in page
    assert '<span class="lineno">7</span>def batched_dot(a, b)</pre>' in page
    # Hints are for checks that ran; these never did.
    assert "Is the batch a Python loop?" not in page
    assert "What does vmap&#39;s in_axes say" not in page


def test_a_skip_reason_is_shown_once(page: str) -> None:
    assert page.count("flax is not installed") == 1
    assert '<span class="muted">see above</span>' in page


def test_untouched_stub_checks_are_folded(page: str) -> None:
    assert "<summary>2 checks waiting for your code</summary>" in page


def test_element_ids_are_unique(page: str) -> None:
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids))


def test_output_is_collapsible_and_artifacts_embedded(report: Report, page: str) -> None:
    assert "<details>\n      <summary>Captured output (2 lines)</summary>" in page
    artifact = report.exercises[-1].artifacts[0]
    assert f'<img src="{artifact.data_uri}" alt="Step time, eager vs jit">' in page
    assert artifact.data_uri.startswith("data:image/png;base64,iVBORw0KGgo")
    assert '<tr><td>eager_ms</td><td class="num">3.042</td></tr>' in page


def test_deterministic(page: str) -> None:
    assert page == html.render(sample_report())


def test_well_formed(page: str) -> None:
    void = {"meta", "img", "br", "hr", "input", "link"}

    class Balance(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.stack: list[str] = []

        def handle_starttag(self, tag: str, attrs: Any) -> None:
            if tag not in void:
                self.stack.append(tag)

        def handle_endtag(self, tag: str) -> None:
            assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
            self.stack.pop()

    parser = Balance()
    parser.feed(page)
    parser.close()
    assert parser.stack == []


def test_empty_report() -> None:
    page = html.render(Report(exercises=(), seed=0, submission=".", grader_version="0"))
    assert "No exercises were graded." in page


def test_template_falls_back_to_the_checkout(monkeypatch: pytest.MonkeyPatch, page: str) -> None:
    def missing(package: str) -> Any:
        raise ModuleNotFoundError(package)

    checkout = (html.SOURCE_TEMPLATES / html.TEMPLATE).read_text(encoding="utf-8")
    monkeypatch.setattr(resources, "files", missing)
    assert html.template_source() == checkout
    html._template.cache_clear()
    try:
        assert html.render(sample_report()) == page
    finally:
        html._template.cache_clear()


def test_write(report: Report, tmp_path: Any, page: str) -> None:
    path = html.write(report, tmp_path / "report.html")
    assert path.read_text(encoding="utf-8") == page
