"""`grade mutate`: the operators on small sources, stable ids, the equivalent-mutants file,
the report, and one real run on a tiny course (slow)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("libcst")

from grader.mutate import equivalent, generate, report
from grader.mutate.grade_mutants import Outcome
from grader.mutate.operators import BY_NAME, OPERATORS

ROOT = Path(__file__).resolve().parents[2]


def mutants(source: str, operator: str) -> list[generate.Mutant]:
    return generate.generate(textwrap.dedent(source), "lesson", (BY_NAME[operator],))


def added(mutant: generate.Mutant) -> list[str]:
    """The lines the mutant's diff adds, stripped."""
    return [
        line[1:].strip()
        for line in mutant.diff.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]


CASES = [
    (
        "cond_to_where",
        """
        from jax import lax
        def f(x):
            return lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)
        """,
        ["return jnp.where(x > 0, (lambda v: v**2)(x), (lambda v: -v)(x))"],
    ),
    (
        "cond_to_if",
        """
        import jax
        def f(x):
            return jax.lax.cond(x > 0, g, h, x)
        """,
        ["return (g(x) if x > 0 else h(x))"],
    ),
    (
        "loop_to_python",
        """
        from jax import lax
        def f(xs):
            return lax.scan(step, 0.0, xs), lax.fori_loop(0, 3, body, 1.0)
        """,
        [
            "return _mutant_scan(step, 0.0, xs), lax.fori_loop(0, 3, body, 1.0)",
            "return lax.scan(step, 0.0, xs), _mutant_fori_loop(0, 3, body, 1.0)",
        ],
    ),
    (
        "vmap_to_loop",
        """
        import jax
        def f(p, xs):
            return jax.vmap(g, in_axes=(None, 0))(p, xs)
        """,
        ["return _mutant_vmap(g, in_axes=(None, 0))(p, xs)"],
    ),
    (
        "split_dropped",
        """
        import jax
        def f(key, n):
            a, b = jax.random.split(key)
            return jax.random.split(a, n)
        """,
        ["a, b = jnp.stack([key] * (2))", "return jnp.stack([a] * (n))"],
    ),
    (
        "key_reused",
        """
        import jax
        def f(key, x):
            key2, sub = jax.random.split(key)
            k = jax.random.fold_in(sub, 3)
            return jax.random.normal(sub, x.shape)
        """,
        ["k = sub", "return jax.random.normal(key, x.shape)"],
    ),
    (
        "axis_changed",
        """
        import jax
        import jax.numpy as jnp
        def f(x, p):
            return jnp.mean(x, axis=0), jax.vmap(g, in_axes=(None, 0))(p, x)
        """,
        [
            "return jnp.mean(x, axis=1), jax.vmap(g, in_axes=(None, 0))(p, x)",
            "return jnp.mean(x, axis=0), jax.vmap(g, in_axes=(0, 0))(p, x)",
            "return jnp.mean(x, axis=0), jax.vmap(g, in_axes=(None, None))(p, x)",
        ],
    ),
    (
        "jnp_to_np",
        """
        import jax.numpy as jnp
        def f(x):
            return jnp.sqrt(jnp.fancy_jax_only(x))
        """,
        ["return np.sqrt(jnp.fancy_jax_only(x))"],
    ),
    (
        "static_removed",
        """
        from functools import partial
        import jax
        @partial(jax.jit, static_argnames=("n",))
        def f(x, n):
            return x
        g = jax.jit(f, static_argnums=1)
        """,
        ["@partial(jax.jit)", "g = jax.jit(f)"],
    ),
    (
        "update_dropped",
        """
        def step(params, opt_state, grads):
            updates, opt_state = optimizer.update(grads, opt_state, params)
            params = optax.apply_updates(params, updates)
            return params, opt_state
        """,
        [
            "updates, _ = optimizer.update(grads, opt_state, params)",
            "pass",
            "params = params",
        ],
    ),
    (
        "state_returned",
        """
        def step(params, opt_state, x):
            return update(params, x), opt_state
        """,
        ["return params, opt_state"],
    ),
    (
        "api_swapped",
        """
        import jax
        def f(g):
            return jax.lax.pmean(g, "i")
        """,
        ['return jax.lax.psum(g, "i")'],
    ),
    (
        "sign_flipped",
        """
        def f(a, b):
            return -a + b
        """,
        ["return -a - b", "return a + b"],
    ),
    (
        "arith_changed",
        """
        def f(a, b):
            return a * b ** 2
        """,
        ["return a / b ** 2", "return a * b * 2"],
    ),
    (
        "off_by_one",
        """
        def f(xs, n):
            for i in range(1, n):
                pass
            return xs[:n]
        """,
        ["for i in range(2, n):", "for i in range(1, n - 1):", "return xs[:n - 1]"],
    ),
    (
        "constant_changed",
        """
        def f(x, flag=True):
            return 0.5 * x + 3
        """,
        ["def f(x, flag=False):", "return 1.0 * x + 3", "return 0.5 * x + 4"],
    ),
    (
        "comparison_changed",
        """
        def f(x):
            return x > 0
        """,
        ["return x >= 0"],
    ),
    (
        "call_dropped",
        """
        import jax
        def f(x):
            return jax.nn.relu(x)
        """,
        ["return x"],
    ),
    (
        "args_swapped",
        """
        import optax
        def f():
            return optax.chain(clip, adam)
        """,
        ["return optax.chain(adam, clip)"],
    ),
    (
        "kwarg_dropped",
        """
        import jax.numpy as jnp
        def f(x):
            return jnp.mean(x, axis=0, keepdims=True)
        """,
        ["return jnp.mean(x, keepdims=True)", "return jnp.mean(x, axis=0)"],
    ),
    (
        "statement_dropped",
        """
        import jax
        def f(x):
            if x < 0:
                raise ValueError("negative")
            jax.block_until_ready(x)
        """,
        ["pass", "pass"],
    ),
]


@pytest.mark.parametrize(("operator", "source", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_operator_makes_the_mutants_expected(
    operator: str, source: str, expected: list[str]
) -> None:
    found = mutants(source, operator)
    assert [added(m) for m in found] == [[line] for line in expected]
    for mutant in found:
        assert mutant.operator == operator
        assert mutant.id.startswith(f"{operator}:")
        compile(mutant.source, mutant.id, "exec")


def test_jit_removed_drops_the_decorator_and_the_call() -> None:
    found = mutants(
        """
        import jax
        @jax.jit
        def f(x):
            return x
        fast = jax.jit(f)
        """,
        "jit_removed",
    )
    assert len(found) == 2
    assert "-@jax.jit" in found[0].diff.splitlines()
    assert added(found[1]) == ["fast = f"]


def test_every_operator_is_tested_here() -> None:
    assert {op.name for op in OPERATORS} == {c[0] for c in CASES} | {"jit_removed"}


def test_a_missing_import_and_the_lax_stand_in_are_appended() -> None:
    (mutant,) = mutants(
        """
        import numpy as onp
        from jax import lax
        import jax.numpy as jnp
        def total(xs):
            return lax.scan(step, 0.0, xs)
        def f(x):
            return jnp.abs(x)
        """,
        "loop_to_python",
    )
    assert mutant.needs == ("_mutant_scan",)
    assert "def _mutant_scan(" in mutant.source
    assert "_mutant_scan" not in mutant.diff.split("@@")[0]  # the diff shows the defect only
    (np_mutant,) = mutants(
        """
        import jax.numpy as jnp
        def f(x):
            return jnp.abs(x)
        """,
        "jnp_to_np",
    )
    assert "\nimport numpy as np\n" in np_mutant.source


def test_the_python_stand_ins_compute_what_lax_computes() -> None:
    jnp = pytest.importorskip("jax.numpy")
    source = textwrap.dedent(
        """
        import jax.numpy as jnp
        from jax import lax
        def running_sum(xs):
            def step(total, x):
                return total + x, total + x
            return lax.scan(step, jnp.zeros(()), xs)
        def power(a, n):
            return lax.fori_loop(0, n, lambda i, x: x * a, 1.0)
        """
    )
    xs = jnp.arange(1.0, 5.0)
    for mutant in generate.generate(source, "lesson", (BY_NAME["loop_to_python"],)):
        namespace: dict[str, object] = {}
        exec(compile(mutant.source, mutant.id, "exec"), namespace)
        if "running_sum" in mutant.id:
            total, partial = namespace["running_sum"](xs)  # type: ignore[operator]
            assert float(total) == 10.0 and partial.tolist() == [1.0, 3.0, 6.0, 10.0]
        else:
            assert float(namespace["power"](2.0, 3)) == 8.0  # type: ignore[operator]


def test_docstrings_imports_and_the_main_guard_are_not_mutated() -> None:
    source = textwrap.dedent(
        '''
        """Module docstring with 1 + 2."""
        import jax.numpy as jnp
        def f(x):
            """Return x - 1."""
            return x
        if __name__ == "__main__":
            print(f(1) + 2)
        '''
    )
    assert generate.generate(source, "lesson") == []


def test_ids_are_stable_across_runs_and_line_moves_and_distinct() -> None:
    source = textwrap.dedent(
        """
        def f(x):
            a = x + 1
            b = x + 1
            return a * b
        """
    )
    first = generate.generate(source, "lesson")
    again = generate.generate(source, "lesson")
    moved = generate.generate("def g():\n    return None\n\n" + source, "lesson")
    assert [m.id for m in first] == [m.id for m in again]
    assert [m.id for m in first] == [m.id for m in moved if m.function == "f"]
    assert [m.line + 3 for m in first] == [m.line for m in moved if m.function == "f"]
    assert len({m.id for m in first}) == len(first)  # the two identical `x + 1` edits differ


def test_every_solution_mutant_compiles_and_limit_spreads_over_operators() -> None:
    every = generate.generate((ROOT / "solutions" / "03_jit.py").read_text(), "03_jit")
    for mutant in every:
        compile(mutant.source, mutant.id, "exec")
    chosen = generate.select(every, 20)
    assert len(chosen) == 20
    assert chosen == generate.select(every, 20)
    operators = {m.operator for m in every}
    assert {m.operator for m in chosen} == operators  # round robin: no operator crowds out others
    assert generate.select(every[:5], 20) == every[:5]


def test_the_equivalent_file_is_read_and_stale_entries_are_named(tmp_path: Path) -> None:
    path = tmp_path / "equivalent.toml"
    path.write_text('["03_jit"]\n"a:f:1" = "same values"\n"gone:f:2" = "was equivalent"\n')
    listed = equivalent.load(path)
    assert listed == {"03_jit": {"a:f:1": "same values", "gone:f:2": "was equivalent"}}
    assert equivalent.stale(listed["03_jit"], ["a:f:1", "b:f:3"]) == ["gone:f:2"]
    assert equivalent.load(tmp_path / "absent.toml") == {}
    path.write_text('["03_jit"]\n"a:f:1" = ""\n')
    with pytest.raises(equivalent.EquivalentFileError, match="reasons"):
        equivalent.load(path)
    assert isinstance(equivalent.load(equivalent.DEFAULT), dict)  # the committed file reads


def test_report_counts_and_table() -> None:
    found = mutants("def f(a, b):\n    return -a + b\n", "sign_flipped")
    summary = report.FileSummary("lesson", generated=3, mutants=found)
    summary.outcomes = {
        found[0].id: Outcome("lesson", found[0].id, True, "failed", 1, 2, "test_f", 0.1),
        found[1].id: Outcome("lesson", found[1].id, False, "passed", 2, 2, "passed", 0.1),
    }
    doc = report.document([summary], {"limit": None})
    entry = doc["files"]["lesson"]
    assert (entry["mutants"], entry["killed"], entry["equivalent"]) == (2, 1, 0)
    assert [s["id"] for s in entry["survivors"]] == [found[1].id]
    assert set(entry["survivors"][0]) == {"id", "operator", "function", "line", "diff"}
    assert "| lesson | 2 | 1 | 0 | 1 | 50% |" in report.table([summary])


WEAK_SUITE = '''
"""A deliberately weak suite: add is checked on one case where a - b == a + b."""

from grader.checks.failure import fail
from grader.authoring import check

LESSON = "01_sums"
TITLE = "sums (mutation fixture)"
TIMEOUT = 60


@check("add(2, 0)", points=1, hint="Which operator adds?")
def test_add(student):
    if student.add(2, 0) != 2:
        raise fail("add(2, 0)", expected="2", observed=repr(student.add(2, 0)))


@check("total([1, 2, 3])", points=1, hint="Start from 0.")
def test_total(student):
    if student.total([1, 2, 3]) != 6:
        raise fail("total([1, 2, 3])", expected="6", observed=repr(student.total([1, 2, 3])))
'''


@pytest.mark.slow
def test_grade_mutate_end_to_end(tmp_path: Path) -> None:
    """A real `grade mutate` in a subprocess on a tiny course whose suite checks add(2, 0)
    only: `a - b` survives, `acc = 1` is killed; the JSON has the documented shape."""
    suites, solutions = tmp_path / "suites", tmp_path / "solutions"
    suites.mkdir()
    solutions.mkdir()
    (suites / "test_01_sums.py").write_text(WEAK_SUITE)
    source = ROOT / "tests" / "commands" / "fixtures" / "solutions" / "01_sums.py"
    (solutions / "01_sums.py").write_text(source.read_text())
    every = generate.generate(source.read_text(), "01_sums")
    weak = next(m for m in every if added(m) == ["return a - b"])
    listed = tmp_path / "equivalent.toml"
    listed.write_text('["01_sums"]\n"gone:total:00000000" = "an old entry"\n')
    out = tmp_path / "mutate.json"
    done = subprocess.run(
        [
            sys.executable, "-m", "grader", "mutate", "--suites", str(suites),
            "--solutions", str(solutions), "--only", "01_sums", "--json", str(out),
            "--equivalent", str(listed), "--operators", "sign_flipped,constant_changed",
            "--jobs", "2", "--fail-under", "100",
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr  # below --fail-under 100
    doc = json.loads(out.read_text())
    entry = doc["files"]["01_sums"]
    assert entry["mutants"] == entry["killed"] + entry["equivalent"] + len(entry["survivors"])
    assert entry["mutants"] >= 3 and entry["equivalent"] == 0
    assert weak.id in [s["id"] for s in entry["survivors"]]
    survivor = next(s for s in entry["survivors"] if s["id"] == weak.id)
    assert survivor["operator"] == "sign_flipped" and "+    return a - b" in survivor["diff"]
    killed = {k["id"]: k["by"] for k in entry["killed_mutants"]}
    acc = next(m for m in every if added(m) == ["acc = 1"])
    assert killed[acc.id] == "test_total"
    assert entry["stale_equivalent"] == ["gone:total:00000000"]
    assert "stale entry" in done.stderr and "kill rate" in done.stderr
    assert "| 01_sums |" in done.stdout and "SURVIVED 01_sums " + weak.id in done.stdout


def test_a_kill_is_credited_to_the_check_that_failed_not_to_one_left_unreached() -> None:
    from grader.model import CheckResult, ExerciseResult
    from grader.mutate.grade_mutants import outcome_of

    def check(
        id_: str, status: str, message: str = "", blocked_by: str | None = None
    ) -> CheckResult:
        score = 1.0 if status == "passed" else 0.0
        return CheckResult(
            id_,
            id_,
            status,
            score,
            1.0,
            "public",
            message,
            "hint",  # type: ignore[arg-type]
            blocked_by=blocked_by,
        )

    result = ExerciseResult(
        "x",
        "x",
        "error",
        (
            check("test_a", "passed"),
            check("test_gated", "failed", "fix the values first", blocked_by="test_c"),
            check("test_b", "error", "not run: the suite never reached this check"),
            check("test_c", "failed", "values are wrong"),
        ),
    )
    outcome = outcome_of("x", "m", result)
    assert outcome.killed and outcome.by == "test_c"


def test_ids_pick_the_mutants_to_list_and_an_unknown_id_is_a_usage_error() -> None:
    """`grade mutate --list --ids A,B` prints those two mutants only; an id no chosen file
    generates exits 2 and names it."""
    every = generate.generate((ROOT / "solutions" / "03_jit.py").read_text(), "03_jit")
    first, last = every[0].id, every[-1].id

    def run(ids: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "grader", "mutate", "--only", "03_jit", "--list", "--ids", ids],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    listed = run(f"{first},{last}")
    assert listed.returncode == 0, listed.stderr
    shown = [line.split()[1] for line in listed.stdout.splitlines() if line.startswith("03_jit ")]
    assert shown == [first, last]
    assert "03_jit: 2 of" in listed.stdout
    missing = run(f"{first},nothing:here:00000000")
    assert missing.returncode == 2
    assert "nothing:here:00000000" in missing.stderr and first not in missing.stderr
