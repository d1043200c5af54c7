"""Similar lesson files: copies renamed and recommented are found, independent work is not."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from grader.classroom import similarity

ROOT = Path(__file__).resolve().parents[2]
STUB = (ROOT / "exercises" / "03_jit.py").read_text()
HEADER = STUB[: STUB.index("def piecewise")]  # the lesson's docstring and imports, as given

ORIGINAL = (
    HEADER
    + '''
def piecewise(x):
    """Branch with lax.cond."""
    return lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)


def running_sum(xs):
    xs = jnp.asarray(xs)

    def step(total, x):
        total = total + x
        return total, total

    return lax.scan(step, jnp.zeros((), xs.dtype), xs)


def newton_sqrt(a, n_iters=20):
    a = jnp.asarray(a, jnp.float32)

    def body(i, x):
        return 0.5 * (x + a / x)

    return lax.fori_loop(0, n_iters, body, jnp.maximum(a, 1.0))
'''
)


def renamed(source: str) -> str:
    """ORIGINAL as a copier hands it in: other names, other comments, other layout."""
    for old, new in [
        ("total", "acc"),
        ("step", "advance"),
        ("body", "newton_update"),
        ("xs", "values"),
        ("v", "z"),
    ]:
        source = re.sub(rf"\b{old}\b", new, source)
    source = source.replace('    """Branch with lax.cond."""\n', "    # my own branch, honest\n")
    source = source.replace(
        "return 0.5 * (x + a / x)", "return 0.5 * (\n            x + a / x\n        )"
    )
    return source.replace("\n\n\ndef ", "\n\n# next exercise\ndef ")


INDEPENDENT = {
    "ula": HEADER
    + """
def piecewise(x):
    return jax.lax.cond(x <= 0, jnp.negative, jnp.square, x)


def running_sum(xs):
    def add(carry, x):
        carry = carry + x
        return carry, carry

    final, partial = jax.lax.scan(add, 0.0 * xs[0], xs)
    return final, partial


def newton_sqrt(a, n_iters=20):
    guess = (a + 1.0) / 2.0
    return jax.lax.fori_loop(0, n_iters, lambda _, g: (g + a / g) / 2, guess)
""",
    "vic": HEADER
    + """
import functools


@jax.jit
def piecewise(x):
    return lax.cond(x > 0, jnp.square, jnp.negative, x)


@jax.jit
def running_sum(xs):
    def body(carry, x):
        count, acc = carry
        return (count + 1, acc + x), acc + x

    (_, acc), partial = lax.scan(body, (0, jnp.zeros((), xs.dtype)), xs)
    return acc, partial


@functools.partial(jax.jit, static_argnames=("n_iters",))
def newton_sqrt(a, n_iters=20):
    def step(carry):
        i, x = carry
        return i + 1, (x + a / x) / 2

    return lax.while_loop(lambda c: c[0] < n_iters, step, (0, jnp.maximum(a, 1.0)))[1]
""",
}


def test_names_comments_docstrings_and_layout_do_not_change_the_tokens() -> None:
    assert similarity.tokens(renamed(ORIGINAL)) == similarity.tokens(ORIGINAL)
    assert similarity.tokens("x = 1  # one\n") == similarity.tokens("count   =   1\n")
    assert similarity.tokens('def f():\n    """Doc."""\n    return "s"\n') == [
        "def", "N", "(", ")", ":", ";", "{", "return", "S", ";", "}",
    ]  # fmt: skip
    # what the code does is kept: the API it calls, operators, numbers
    assert similarity.tokens("lax.scan(f)") != similarity.tokens("lax.fori_loop(f)")
    assert similarity.tokens("a + 1") != similarity.tokens("a * 2")


def test_the_copied_pair_comes_first_and_independent_solutions_score_low() -> None:
    files = {
        "tom": {"03_jit": ORIGINAL},
        "sam": {"03_jit": renamed(ORIGINAL)},
        **{name: {"03_jit": source} for name, source in INDEPENDENT.items()},
        "wes": {"03_jit": STUB},  # untouched: nothing of their own to compare
    }
    pairs = similarity.compare(files, {"03_jit": STUB}, floor=0.0)
    top = pairs[0]
    assert (top.lesson, top.first, top.second, top.score) == ("03_jit", "sam", "tom", 1.0)
    assert top.suspicious and top.shared >= 20
    others = [p for p in pairs if {p.first, p.second} != {"sam", "tom"}]
    assert others and max(p.score for p in others) < similarity.REPORTED, others
    assert not any("wes" in (p.first, p.second) for p in pairs)
    reported = similarity.compare(files, {"03_jit": STUB})
    assert [(p.first, p.second) for p in reported] == [("sam", "tom")]


def test_the_stub_is_subtracted() -> None:
    """Two students who each did a different function share only what the stub gave them
    (imports, signatures, the other functions' `raise NotImplementedError`)."""

    def solved(function: str, body: str) -> str:
        return STUB.replace(f'raise NotImplementedError("{function} is not implemented yet")', body)

    files = {
        "a": {"03_jit": solved("piecewise", "return lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)")},
        "b": {"03_jit": solved("newton_sqrt", "return lax.fori_loop(0, n_iters, lambda i, x: (x + a / x) / 2, a)")},
    }  # fmt: skip
    without = similarity.compare(files, {}, floor=0.0)
    assert without and without[0].score >= similarity.REPORTED  # the stub alone: reported
    assert similarity.compare(files, {"03_jit": STUB}, floor=0.0) == []


def test_code_most_of_the_class_writes_is_not_evidence() -> None:
    common = "def f(xs):\n    return jnp.sum(jnp.asarray(xs) * 2.0, axis=0, keepdims=True) + 1\n"
    files = {name: {"l": common + own} for name, own in [
        ("a", "def g(y):\n    return y[::-1].cumsum()\n"),
        ("b", "def g(y):\n    while y:\n        y = y - 1\n    return y\n"),
        ("c", "class G:\n    value = [1, 2, 3]\n"),
        ("d", "def g(y):\n    return {k: v for k, v in y.items() if v}\n"),
    ]}  # fmt: skip
    assert similarity.compare(files, {}, floor=0.5) == []


def test_fingerprints_are_the_same_in_every_process() -> None:
    code = "from grader.classroom import similarity as s; print(sorted(s.fingerprints(open(0).read())))"
    runs = {
        subprocess.run(
            [sys.executable, "-c", code],
            input=ORIGINAL,
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(runs) == 1 and str(sorted(similarity.fingerprints(ORIGINAL))) + "\n" in runs


def test_notebooks_are_compared_by_their_code_cells(tmp_path: Path) -> None:
    import json

    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# 03"]},
            {"cell_type": "code", "metadata": {}, "source": ORIGINAL, "outputs": [],
             "execution_count": None},
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }  # fmt: skip
    path = tmp_path / "03_jit.ipynb"
    path.write_text(json.dumps(notebook))
    assert similarity.tokens(similarity.source_of(path)) == similarity.tokens(ORIGINAL)
    assert similarity.source_of(tmp_path / "missing.py") == ""


def padding(functions: int) -> str:
    """Functions a copier adds and never calls, each different from the others."""
    return "".join(
        f"\n\ndef helper_{i}(a, b={i}):\n"
        f"    c = a * {i} + b ** {i % 7}\n"
        f"    return [c - k for k in range({i % 11 + 1})] if c > {i} else c / {i + 1}\n"
        for i in range(functions)
    )


def test_a_copy_padded_with_functions_never_called_is_still_reported() -> None:
    files = {
        "tom": {"03_jit": ORIGINAL},
        "pad": {"03_jit": renamed(ORIGINAL) + padding(300)},
        **{name: {"03_jit": source} for name, source in INDEPENDENT.items()},
    }
    pairs = similarity.compare(files, {"03_jit": STUB})
    top = pairs[0]
    assert (top.first, top.second, top.score) == ("pad", "tom", 1.0), pairs
    assert top.suspicious
    assert top.overlap < 0.1  # the Jaccard index alone would not have named them
    assert top.second_size == top.shared < top.first_size // 10
    assert [(p.first, p.second) for p in pairs if p.suspicious] == [("pad", "tom")]


def short(piecewise: str, running_sum: str, newton: str) -> str:
    """The 03_jit stub filled with three short answers."""
    filled = STUB
    for function, body in [
        ("piecewise", piecewise),
        ("running_sum", running_sum),
        ("newton_sqrt", newton),
    ]:
        stub_line = f'raise NotImplementedError("{function} is not implemented yet")'
        assert stub_line in STUB
        filled = filled.replace(stub_line, body or stub_line)
    return filled


def test_two_independent_short_correct_answers_are_not_flagged() -> None:
    """Each wrote short code of their own; ann and cal the same obvious one-liner for
    piecewise, which is all cal did (so all of cal's own code is in ann's file)."""
    files = {
        "ann": {
            "03_jit": short(
                "return lax.cond(x > 0, jnp.square, jnp.negative, x)",
                "return lax.scan(lambda c, x: (c + x, c + x), jnp.zeros((), xs.dtype), xs)",
                "return lax.fori_loop(0, n_iters, lambda i, g: (g + a / g) / 2, a)",
            )
        },
        "ben": {
            "03_jit": short(
                "return lax.cond(x > 0, lambda v: v * v, lambda v: -v, x)",
                "return jax.lax.scan(lambda s, v: (s + v,) * 2, 0.0 * xs[0], xs)",
                "return lax.fori_loop(0, n_iters, lambda _, y: 0.5 * (y + a / y), jnp.maximum(a, 1.0))",
            )
        },
        # did only piecewise, with ann's (the obvious) line: all of cal's own code is in ann's
        "cal": {"03_jit": short("return lax.cond(x > 0, jnp.square, jnp.negative, x)", "", "")},
    }
    pairs = similarity.compare(files, {"03_jit": STUB}, floor=0.0)
    assert {("ann", "ben"), ("ann", "cal")} <= {(p.first, p.second) for p in pairs}
    assert not any(p.suspicious for p in pairs), pairs
    ann_ben = next(p for p in pairs if (p.first, p.second) == ("ann", "ben"))
    assert ann_ben.score < similarity.SUSPICIOUS  # alike in places, as short answers are
    # all of cal's code is in ann's file: what keeps it from being named is its size
    ann_cal = next(p for p in pairs if (p.first, p.second) == ("ann", "cal"))
    assert ann_cal.score >= similarity.SUSPICIOUS and ann_cal.shared < similarity.MIN_SHARED
    # ann's three answers copied whole into a padded file are named
    files["dan"] = {"03_jit": files["ann"]["03_jit"] + padding(40)}
    named = [
        (p.first, p.second) for p in similarity.compare(files, {"03_jit": STUB}) if p.suspicious
    ]
    assert named == [("ann", "dan")], named


def test_what_is_read_and_fingerprinted_of_a_file_is_bounded(tmp_path: Path) -> None:
    huge = ORIGINAL + padding(60_000)  # about 9 MB
    assert len(huge.encode()) > 20 * similarity.MAX_BYTES
    path = tmp_path / "03_jit.py"
    path.write_text(huge)
    read = similarity.source_of(path)
    assert len(read.encode()) <= similarity.MAX_BYTES and read.endswith("\n")
    assert huge.startswith(read)  # its beginning, cut at a line's end
    assert len(similarity.tokens(huge)) == similarity.MAX_TOKENS
    assert len(similarity.fingerprints(huge)) <= similarity.MAX_TOKENS
    # what the cap keeps is compared: the copy at the start of the file is found
    pairs = similarity.compare({"big": {"l": read}, "tom": {"l": renamed(ORIGINAL)}}, {"l": STUB})
    assert [(p.first, p.second, p.score) for p in pairs] == [("big", "tom", 1.0)]


def test_a_file_cut_inside_a_string_keeps_what_came_before() -> None:
    assert similarity.tokens('x = 1\ny = """never closed\n') == ["N", "=", "1", ";", "N", "="]


def test_a_declared_latin1_file_is_read_as_python_reads_it(tmp_path: Path) -> None:
    latin = tmp_path / "03_jit.py"
    latin.write_bytes(
        b"# -*- coding: latin-1 -*-\n" + ORIGINAL.replace("Branch", "Caf\xe9").encode("latin-1")
    )
    assert "Café" in similarity.source_of(latin)
    assert similarity.tokens(similarity.source_of(latin)) == similarity.tokens(ORIGINAL)
