"""Value checks: arrays and pytrees compared with a reference, and a property-based
search (Hypothesis) that reports the smallest input on which the student's function
and the reference disagree.

    values.assert_close(student.standardize(x), _ref_standardize(x), what="standardize(x)")
    values.assert_matches_reference(student.add_at, _ref_add_at, _add_at_args(),
                                    what="add_at(x, indices, values)")

Every failure names the leaf (`['layer1']['w']`), the first bad index, the actual and
expected values there and the largest absolute and relative errors; NaN and inf are
named as such.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import chex
import jax
import numpy as np

from grader.checks import calls as _calls
from grader.checks import diagnose
from grader.checks.failure import CheckFailure, fail
from grader.explain import explain
from grader.probes import _format
from grader.sandbox import client

_KINDS = {"f": "floating", "i": "integer", "u": "integer", "b": "bool", "c": "complex"}


@dataclass(frozen=True)
class Difference:
    """The first way two pytrees differ, as text for a failure message."""

    expected: str
    observed: str
    cause: str = ""
    fix: str = ""


def _leaf_name(path: Any) -> str:
    return jax.tree_util.keystr(path) if path else ""


def _as_array(leaf: Any) -> np.ndarray[Any, Any]:
    if _format.is_key(leaf):
        return np.asarray(jax.random.key_data(leaf))
    return np.asarray(leaf)


def difference(
    actual: Any, expected: Any, *, rtol: float = 1e-5, atol: float = 1e-6
) -> Difference | None:
    """None if `actual` matches `expected` (same structure, shapes, dtype kinds, values
    within `atol + rtol * |expected|`, NaN where NaN), else the first difference."""
    structure = structure_difference(actual, expected)
    if structure is not None:
        return structure
    found = _first_leaf_difference(actual, expected, rtol, atol)
    order = diagnose.swapped_outputs(actual, expected) if found is not None else None
    if found is not None and order is not None:  # structure before numbers: name the order
        return Difference(found.expected, found.observed, order.text)
    return found


def _first_leaf_difference(
    actual: Any, expected: Any, rtol: float, atol: float
) -> Difference | None:
    pairs = zip(
        jax.tree_util.tree_flatten_with_path(actual)[0],
        jax.tree_util.tree_leaves(expected),
        strict=True,
    )
    for (path, a_leaf), e_leaf in pairs:
        found = _leaf_difference(_leaf_name(path), a_leaf, e_leaf, rtol, atol)
        if found is not None:
            return found
    return None


def structure_difference(actual: Any, expected: Any) -> Difference | None:
    a_def, e_def = jax.tree.structure(actual), jax.tree.structure(expected)
    if a_def == e_def:  # type: ignore[operator]
        return None
    cause = "the result is not the same kind of container (tuple, list, dict keys, nesting)"
    if isinstance(actual, client.Remote) and actual.is_function:
        return Difference(
            expected=f"a pytree shaped like {_format.show(_skeleton(_format.as_produced(expected)))}",
            observed=f"a function, {actual!r}",
            cause="a function came back, not values: it was built (jax.value_and_grad, "
            "jax.grad, jax.jit and jax.vmap each return one) but never called on the arguments",
        )
    if actual is None:
        cause = diagnose.NOT_WRITTEN
    elif diagnose.arity_cause(actual, expected):
        cause = diagnose.arity_cause(actual, expected)
    elif diagnose.missing_outputs(actual, expected):
        cause = diagnose.missing_outputs(actual, expected)
    elif isinstance(expected, tuple) and isinstance(actual, list):
        cause = "a list was returned where a tuple is expected"
    elif _order_text(actual, expected):
        cause = _order_text(actual, expected)
    elif diagnose.extra_outputs(actual, expected):
        cause = diagnose.extra_outputs(actual, expected)
    elif pieces_cause(actual, expected):
        cause = pieces_cause(actual, expected)
    elif isinstance(expected, dict) and isinstance(actual, dict) and set(actual) != set(expected):
        missing = sorted(map(str, set(expected) - set(actual)))
        extra = sorted(map(str, set(actual) - set(expected)))
        cause = f"dict keys differ (missing: {missing or 'none'}, unexpected: {extra or 'none'})"
    return Difference(
        expected=f"a pytree shaped like {_format.show(_skeleton(_format.as_produced(expected)))}",
        observed=f"{_format.show(_skeleton(actual))}",
        cause=cause,
    )


def _order_text(actual: Any, expected: Any) -> str:
    """`diagnose.swapped_outputs`'s text (outputs of other containers in each other's
    places), "" where it finds none."""
    found = diagnose.swapped_outputs(actual, expected)
    return found.text if found is not None else ""


def pieces_cause(actual: Any, expected: Any) -> str:
    """A list or tuple of numbers or arrays where one number or one array is expected: what
    the pieces are (observed on this result alone: its structure, not a guess), or ""."""
    if not isinstance(actual, list | tuple) or not actual:
        return ""
    if expected is None or isinstance(expected, list | tuple | dict) or _format.is_key(expected):
        return ""
    try:
        e = np.asarray(expected)
        parts = [np.asarray(piece) for piece in actual]
    except (TypeError, ValueError):
        return ""
    if e.dtype.kind not in "fiub" or any(p.dtype.kind not in "fiub" for p in parts):
        return ""
    n, container = len(parts), type(actual).__name__
    if e.ndim == 0:
        return (
            f"a {container} of {n} values was returned where one number is expected: the "
            "values are never combined into one"
        )
    shapes = {p.shape for p in parts}
    if len(shapes) == 1 and (n, *next(iter(shapes))) == e.shape:
        return (
            f"a {container} of {n} arrays of shape {next(iter(shapes))} was returned where one "
            f"array of shape {e.shape} is expected: stacked along a new first axis "
            "(`jnp.stack`), the pieces would have that shape"
        )
    if (
        all(p.ndim == e.ndim and p.shape[1:] == e.shape[1:] for p in parts)
        and sum(p.shape[0] for p in parts) == e.shape[0]
    ):
        return (
            f"a {container} of {n} arrays was returned where one array of shape {e.shape} is "
            "expected: joined along the first axis (`jnp.concatenate`), the pieces would "
            "have that shape"
        )
    return ""


def _skeleton(tree: Any) -> Any:
    """The tree with each leaf replaced by its aval text, for showing structure."""
    return jax.tree.map(lambda leaf: _Literal(_format.aval(leaf)), tree)


class _Literal(str):
    def __repr__(self) -> str:
        return str(self)


def _leaf_difference(
    name: str, a_leaf: Any, e_leaf: Any, rtol: float, atol: float
) -> Difference | None:
    where = f" at {name}" if name else ""
    try:
        a = _as_array(a_leaf)
    except (TypeError, ValueError) as exc:
        return Difference(f"an array{where}", f"{type(a_leaf).__name__} ({exc})")
    e = _as_array(e_leaf)
    shown = _format.as_produced(e)  # the expected values in the dtype the student should produce
    if a.shape != e.shape:
        cause = diagnose.end_cause(a, e) or diagnose.shape_cause(a.shape, e.shape)
        return Difference(f"shape {e.shape}{where}", f"shape {a.shape}", cause)
    a_kind, e_kind = _KINDS.get(a.dtype.kind, a.dtype.kind), _KINDS.get(e.dtype.kind, e.dtype.kind)
    python_number = any(type(x) in (int, float) for x in (a_leaf, e_leaf))
    if a_kind != e_kind and not (python_number and {a_kind, e_kind} <= {"integer", "floating"}):
        return Difference(
            f"{e_kind} values (dtype {_format.produced_dtype(e.dtype)}){where}",
            f"{a_kind} values (dtype {a.dtype})",
        )
    if a_kind in ("bool", "integer"):
        bad = a != e
    else:
        a_nan, e_nan = np.isnan(a), np.isnan(e)
        a_inf = np.isinf(a) & ~np.isinf(e)
        if (a_nan & ~e_nan).any() or a_inf.any():
            mask = (a_nan & ~e_nan) | a_inf
            idx = _first(mask)
            what = "NaN" if (a_nan & ~e_nan).any() else "inf"
            return Difference(
                f"finite values{where}",
                f"{int(mask.sum())} of {a.size} values are NaN/inf; first {what} at index {idx} "
                f"(expected {_format.show(shown[idx])})",
                fix=_NONFINITE_FIX,
            )
        bad = ~np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return None
    idx = _first(bad)
    abs_err = np.abs(a.astype(np.float64) - e.astype(np.float64))
    scale = np.abs(e.astype(np.float64))
    # A relative error means nothing where the expected value is 0: only nonzero ones count.
    relative = bad & (scale > 0)
    rel_err = np.where(relative, abs_err / np.where(relative, scale, 1.0), 0.0)
    abs_err = np.where(bad, abs_err, 0)
    rel_text = f", max rel error {float(rel_err.max()):.3g}" if relative.any() else ""
    return Difference(
        expected=f"{_format.show(shown)}{where} (rtol={rtol:g}, atol={atol:g})",
        observed=f"{_format.show(a)}: {int(bad.sum())} of {a.size} values differ; first at index "
        f"{idx}: {_format.show(a[idx])} instead of {_format.show(shown[idx])}; max abs error "
        f"{float(abs_err.max()):.3g}{rel_text}",
    )


_NONFINITE_FIX = (
    "look for what can produce NaN or inf there: a division by zero, a log or sqrt of a "
    "non-positive number, an exp that overflows (`jax.nn.log_softmax`/`logsumexp` do not)"
)


def _first(mask: np.ndarray[Any, Any]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argwhere(mask)[0]) if mask.ndim else ()


def assert_close(
    actual: Any,
    expected: Any,
    *,
    what: str,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    cause: str = "",
    fix: str = "",
    diagnostics: Sequence[diagnose.Diagnostic] = (),
) -> None:
    """`actual` equals `expected` leaf by leaf (structure, shape, dtype kind, values).
    Without a `cause`, the first of `diagnostics` that the values confirm names one
    (`grader.checks.diagnose`); when none does, the failure only shows the difference."""
    __tracebackhide__ = True
    found = difference(actual, expected, rtol=rtol, atol=atol)
    if found is None:  # chex agrees on array leaves (it shares our tolerance rule)
        arrays = [jax.tree.map(_as_array, t) for t in (actual, expected)]
        chex.assert_trees_all_close(*arrays, rtol=rtol, atol=atol)
    if found is not None:
        raise fail(
            f"values of {what}",
            expected=found.expected,
            observed=found.observed,
            cause=cause or diagnose.first(actual, expected, *diagnostics) or found.cause,
            fix=fix or found.fix,
        )


def assert_tree_structure(
    actual: Any, expected: Any, *, what: str, cause: str = "", fix: str = ""
) -> None:
    """Same containers, keys and nesting (leaves are not compared)."""
    __tracebackhide__ = True
    found = structure_difference(actual, expected)
    if found is not None:
        raise fail(
            f"the pytree structure of {what}",
            expected=found.expected,
            observed=found.observed,
            cause=cause or found.cause,
            fix=fix,
        )


def assert_shape(
    x: Any, shape: tuple[int | None, ...], *, what: str, cause: str = "", fix: str = ""
) -> None:
    """`x.shape` equals `shape`; `None` in `shape` matches any size. A `cause` the caller
    confirmed comes before what the two shapes themselves show."""
    __tracebackhide__ = True
    got = tuple(getattr(x, "shape", np.shape(x)))
    ok = len(got) == len(shape) and all(
        s is None or s == g for s, g in zip(shape, got, strict=False)
    )
    if not ok:
        wanted = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
        raise fail(
            f"the shape of {what}",
            expected=wanted,
            observed=str(got),
            cause=cause or _shape_cause(got, shape),
            fix=fix,
        )


def _shape_cause(got: tuple[int, ...], wanted: tuple[int | None, ...]) -> str:
    """What the two shapes themselves show (nothing guessed beyond them)."""
    if len(got) == len(wanted) + 1:
        return f"one axis too many{diagnose.unit_axis(got, wanted)}"
    if len(got) + 1 == len(wanted):
        return "one axis too few"
    if len(got) == len(wanted) > 1 and all(
        s is None or s == g for s, g in zip(wanted, reversed(got), strict=True)
    ):
        return "the axes are in the reverse order of the expected shape"
    return ""


def assert_finite(tree: Any, *, what: str, cause: str = "", fix: str = "") -> None:
    """No NaN or inf in any leaf."""
    __tracebackhide__ = True
    try:
        chex.assert_tree_all_finite(tree)
        return
    except AssertionError:
        pass
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        arr = _as_array(leaf)
        if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
            bad = ~np.isfinite(arr)
            idx = _first(bad)
            where = f" at {_leaf_name(path)}" if path else ""
            raise fail(
                f"{what} is finite",
                expected="no NaN or inf",
                observed=f"{int(bad.sum())} of {arr.size} values{where} are NaN/inf; first at "
                f"index {idx}: {_format.show(arr[idx])}",
                cause=cause,
                fix=fix or _NONFINITE_FIX,
            )


# -- property-based search ---------------------------------------------------


class _Mismatch(AssertionError):
    def __init__(
        self,
        args: tuple[Any, ...],
        text: Difference | None,
        exc: BaseException | None,
        expected_out: Any,
        actual_out: Any = None,
    ) -> None:
        super().__init__("mismatch")
        self.args_ = args
        self.text = text
        self.exc = exc
        self.expected_out = expected_out
        self.actual_out = actual_out


def _searching(
    run: Callable[[tuple[Any, ...]], None],
    strategy: Any,
    max_examples: int,
    seed: int | None,
    *,
    shrink: bool = True,
) -> Any:
    """`run` as a Hypothesis test over `strategy`: no deadline, no database, derandomised
    unless `seed` is given, explicit examples, then generated ones, then (unless `shrink` is
    False) shrinking."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    test: Any = given(strategy)(run)  # type: ignore[no-untyped-call]
    test = settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=seed is None,
        print_blob=False,
        report_multiple_bugs=False,
        phases=(Phase.explicit, Phase.generate, Phase.shrink)[: 3 if shrink else 2],
        suppress_health_check=list(HealthCheck),
    )(test)
    return hypothesis_seed(seed)(test) if seed is not None else test


def assert_matches_reference(
    fn: Callable[..., Any],
    reference: Callable[..., Any],
    strategy: Any,
    *,
    what: str,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    max_examples: int = 40,
    seed: int | None = None,
    cause: str = "",
    fix: str = "",
    diagnostics: Callable[[tuple[Any, ...]], Sequence[diagnose.Diagnostic]] | None = None,
) -> int:
    """Search inputs drawn from `strategy` (a Hypothesis strategy of argument tuples) for
    one where `fn` and `reference` differ; fail with the smallest such input (shrunk).
    Without a `cause`, `diagnostics(args)` gives the diagnostics tried on that input's
    values (`grader.checks.diagnose`), and where none is confirmed (or none is given) the
    built-in factor cause is tried (`diagnose.factor`). Returns the number of examples tried."""
    __tracebackhide__ = True
    tried = [0]
    # every failing input seen (the search and its shrinking), for causes that must hold on
    # two inputs of different sizes (`diagnose.across`)
    failures: list[diagnose.Input] = []

    def run(args: tuple[Any, ...]) -> None:
        tried[0] += 1
        expected_out = reference(*args)
        try:
            actual = fn(*args)
        except _calls.PASS_THROUGH:
            raise
        except Exception as exc:
            raise _Mismatch(args, None, exc, expected_out) from exc
        found = difference(actual, expected_out, rtol=rtol, atol=atol)
        if found is not None:
            if len(failures) < 200:
                failures.append((args, actual, expected_out))
            raise _Mismatch(args, found, None, expected_out, actual)

    test = _searching(run, strategy, max_examples, seed)
    try:
        test()
    except _Mismatch as found:
        if not cause and found.exc is None:
            # the suite's diagnostics, then the built-in factor cause (`diagnose.factor`)
            smallest = (found.args_, found.actual_out, found.expected_out)
            more = _more_failures(fn, reference, strategy, found.args_, rtol, atol, seed)
            cause = diagnose.across(
                smallest,
                failures,
                diagnostics or _nothing_offered,
                more,
                _argument_names(what),
                reference,
            )
        raise _search_failure(fn, what, found, cause, fix) from (found.exc or None)
    return tried[0]


def _nothing_offered(args: tuple[Any, ...]) -> Sequence[diagnose.Diagnostic]:
    return ()


def _argument_names(what: str) -> tuple[str, ...]:
    """("w", "x", "y") from "mse_value_and_grad(w, x, y)" (and from "standardize(x) (axis=0)":
    the call `what` starts with); () where `what` starts with no such call."""
    found = re.match(r"\s*[\w.]+\(([^()]*)\)", what)
    if found is None:
        return ()
    names = tuple(name.strip() for name in found.group(1).split(","))
    return names if all(name.isidentifier() for name in names) else ()


# a search for failing inputs of other sizes, when those seen confirm no cause: at most this
# many examples, stopped once this many failures of other sizes are found
MORE_EXAMPLES, MORE_FAILURES = 30, 4


class _Enough(Exception):
    """Enough failing inputs of other sizes were found."""


def _more_failures(
    fn: Callable[..., Any],
    reference: Callable[..., Any],
    strategy: Any,
    smallest: tuple[Any, ...],
    rtol: float,
    atol: float,
    seed: int | None,
) -> Callable[[], list[diagnose.Input]]:
    """A function that searches `strategy` (without shrinking) for inputs of other argument
    shapes than `smallest`'s on which `fn` and `reference` differ, for `diagnose.across` to
    confirm a cause on. An input that raises is left out."""
    shapes = _arg_shapes(smallest)

    def search() -> list[diagnose.Input]:
        found: list[diagnose.Input] = []

        def run(args: tuple[Any, ...]) -> None:
            if len(found) >= MORE_FAILURES:
                raise _Enough  # (Hypothesis runs the example that ended the search again)
            if _arg_shapes(args) == shapes:
                return
            expected_out = reference(*args)
            try:
                actual = fn(*args)
            except _calls.PASS_THROUGH:
                raise
            except Exception:
                return
            if difference(actual, expected_out, rtol=rtol, atol=atol) is not None:
                found.append((args, actual, expected_out))
                if len(found) >= MORE_FAILURES:
                    raise _Enough

        again = None if seed is None else seed + 1
        test = _searching(run, strategy, MORE_EXAMPLES, again, shrink=False)
        with contextlib.suppress(_Enough):
            test()
        return found

    return search


def _arg_shapes(args: Any) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(np.shape(leaf)) for leaf in jax.tree.leaves(args))


def _search_failure(
    fn: Callable[..., Any], what: str, found: _Mismatch, cause: str, fix: str
) -> Any:
    name = _calls.name_of(fn)
    call = _format.call(name, found.args_)
    checked = f"values of {what} on generated inputs (the smallest input that differs is shown)"
    if found.exc is not None:
        where = _calls.student_line(found.exc)
        explained = explain(found.exc) if not cause else None  # JAX's error, in JAX's terms
        return CheckFailure(
            checked,
            expected=f"{call} == {_format.show(_format.as_produced(found.expected_out))}",
            observed=f"{call} raised {type(found.exc).__name__}: {_calls.first_line(found.exc)}"
            + (f"\n    at {where}" if where else ""),
            cause=cause or (explained.cause if explained else ""),
            fix=fix or (explained.fix if explained else ""),
        )
    assert found.text is not None
    return CheckFailure(
        checked,
        expected=f"{call} == {_format.show(_format.as_produced(found.expected_out))}",
        observed=f"{call} gave {found.text.observed}",
        cause=cause or found.text.cause,
        fix=fix or found.text.fix,
    )
