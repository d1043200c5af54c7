"""The HTML page: self-contained, deterministic, and it escapes everything a student wrote."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from importlib import resources
from typing import Any

import jinja2
import pytest
from report_samples import ESCAPES, HOSTILE, MARKUP, hostile_report, sample_report

from grader.batch import gradebook
from grader.model import Report
from grader.reports import controls, html

CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
ACTIVE_TAGS = {"script", "iframe", "object", "embed", "base", "form", "link", "frame"}


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
    assert (
        'isolation <b id="isolation" title="missing: namespaces (unshare is not permitted: '
        'no CAP_SYS_ADMIN)">user</b>'
    ) in page


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


class Parsed(HTMLParser):
    """A page as the browser's tokenizer sees it: tags with attributes, and text."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def csp(self) -> list[str]:
        return [
            a.get("content") or ""
            for t, a in self.tags
            if t == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy"
        ]


@pytest.fixture(scope="module")
def hostile_page() -> str:
    return html.render(hostile_report())


def _assert_inert(page: str) -> Parsed:
    """No markup from student text: no active element, no event handler, images only data:."""
    parsed = Parsed(page)
    assert "<script" not in page.lower()
    assert not {t for t, _ in parsed.tags} & ACTIVE_TAGS
    assert not [(t, a) for t, a in parsed.tags for name in a if name.startswith("on")]
    assert all((a.get("src") or "").startswith("data:image/") for t, a in parsed.tags if t == "img")
    assert not CONTROLS.search(page), CONTROLS.findall(page)
    return parsed


def test_hostile_student_text_is_escaped_everywhere(hostile_page: str) -> None:
    parsed = _assert_inert(hostile_page)
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt; &#34;&gt;&lt;img src=x onerror=alert(1)&gt;"
    # message, captured output, the source line, the exercise message (notebook notes),
    # the artifact's alt text and caption, the metric's name: each shows the markup as text
    assert hostile_page.count(escaped) == 7
    assert f'alt="{escaped}\n' in hostile_page
    assert MARKUP in "".join(parsed.text)  # what the student sees is what they wrote


def test_student_control_characters_are_visible(hostile_page: str) -> None:
    shown = controls.visible(ESCAPES)
    assert shown.startswith("␛[31mred␛[0m ␛]0;pwned title␇")
    assert hostile_page.count(shown) == 7
    assert "iteration 0␀␛[31m red &lt;b&gt;bold&lt;/b&gt;" in html.render(sample_report())


def test_content_security_policy_allows_no_script(hostile_page: str) -> None:
    policy = html.CONTENT_SECURITY_POLICY
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'"  # script-src, connect-src, ... fall back to it
    assert not {"script-src", "script-src-elem", "script-src-attr"} & set(directives)
    assert directives["img-src"] == "data:"
    assert "unsafe-eval" not in policy and "http" not in policy
    parsed = Parsed(hostile_page)
    assert parsed.csp() == [policy]
    # The browser only applies the policy to what follows it: it comes right after the charset.
    assert [t for t, _ in parsed.tags[:4]] == ["html", "head", "meta", "meta"]
    assert parsed.tags[3][1]["content"] == policy


def test_class_summary_is_escaped_and_under_the_same_policy() -> None:
    doc = hostile_report().to_json()
    students = [
        gradebook.Student(MARKUP, doc),
        gradebook.Student("carol", None, error=HOSTILE),
    ]
    page = gradebook.summary_html(students)
    parsed = _assert_inert(page)
    assert parsed.csp() == [html.CONTENT_SECURITY_POLICY]
    text = "".join(parsed.text)
    assert MARKUP in text and controls.visible(ESCAPES) in text
    assert f'href="students/{jinja2.filters.do_urlencode(MARKUP)}.html"' in page


FRAGMENTS = {"notebook.html.j2"}  # %grade's verdict under a notebook cell


def test_every_html_template_is_autoescaped_and_has_the_policy() -> None:
    templates = sorted(html.SOURCE_TEMPLATES.glob("*.html.j2"))
    assert {t.name for t in templates} >= {"report.html.j2", "class-summary.html.j2"}
    env = html.environment(jinja2.FileSystemLoader(str(html.SOURCE_TEMPLATES)))
    assert env.autoescape is True  # for every template, whatever its name
    for path in templates:
        source = path.read_text(encoding="utf-8")
        assert "<script" not in source.lower() and " on" + "load" not in source, path.name
        assert not re.search(r"\|\s*safe\b|autoescape\s+false|Markup\(", source), path.name
        if path.name in FRAGMENTS:  # a cell's output, not a page: no <head> to hold a policy
            assert "<html" not in source.lower() and "<link" not in source.lower(), path.name
            continue
        assert (
            '<meta http-equiv="Content-Security-Policy" content="{{ content_security_policy }}">'
            in source
        )


def test_class_summary_leads_with_the_students_who_need_attention(report: Report) -> None:
    doc = report.to_json()  # 04_vmap is an error
    passed = {**doc, "exercises": [e for e in doc["exercises"] if e["status"] == "passed"]}
    students = [
        gradebook.Student("alice", passed),
        gradebook.Student("bob", doc),
        gradebook.Student("carol", None, error="the grader crashed"),
    ]
    page = gradebook.summary_html(students)
    parsed = Parsed(page)
    ids = {a["id"] for _, a in parsed.tags if a.get("id")}
    card = page[
        page.index('id="attention"') : page.index("</section>", page.index('id="attention"'))
    ]
    links = re.findall(r'<a href="#([^"]+)">([^<]+)</a>', card)
    assert links == [("student-2", "bob"), ("student-3", "carol")]
    assert all(target in ids for target, _ in links)
    assert page.index('id="attention"') < page.index("<h2>Scores</h2>")
    assert "Needs attention" not in gradebook.summary_html(students[:1])
