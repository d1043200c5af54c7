"""Is the function pure, as `jit`, `grad` and `vmap` assume? Same inputs give the same
outputs; arguments are not mutated; module state and the global NumPy/`random` RNGs
are left alone; and nothing happens only while tracing (a `print` or a
`list.append` that runs once, at trace time, and never again).

    purity.assert_pure(student.add_at, (np.zeros(3), np.array([0, 0]), np.ones(2)),
                       what="add_at(x, indices, values)", module=student)
    purity.assert_no_trace_side_effects(student.running_sum, (xs,), what="running_sum(xs)")
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NoReturn

from grader.checks import calls, values
from grader.checks.failure import explainable, fail
from grader.probes import _format
from grader.probes.purity import observe_calls, observe_tracing
from grader.sandbox import client


@explainable
def assert_pure(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Mapping[str, Any] | None = None,
    *,
    what: str,
    module: Any = None,
    cause: str = "",
    fix: str = "",
) -> Any:
    """Two calls with the same inputs agree exactly; `args`/`kwargs` are not mutated
    (deep snapshot: NumPy arrays, lists, dicts, objects); `module`'s globals (default: the
    module that defines `fn`) and the global NumPy and `random` RNG states are unchanged.
    Returns the first output."""
    __tracebackhide__ = True
    kwargs = dict(kwargs or {})
    seen = client.probe(observe_calls, client.handle(fn), tuple(args), kwargs, module)
    checked = f"purity of {what}"
    attempted = _format.call(calls.name_of(fn), args, kwargs)
    first = calls.observed(
        seen["first"], checked=checked, attempted=attempted, expected="the function runs"
    )
    _require_no_side_effect(seen, checked)
    second = calls.observed(
        seen["second"], checked=checked, attempted=attempted, expected="the function runs"
    )
    values.assert_close(
        second,
        first,
        what=f"{what}: a second call with the same inputs",
        rtol=0.0,
        atol=0.0,
        cause="the output depends on something besides the arguments: two calls with the "
        "same arguments gave different results",
        fix="compute the result from the arguments only (no clock, no unseeded generator, no "
        "state kept between calls)",
    )
    return first


# The side effects `observe_calls` reports, in the order they are checked:
# (its key, what was expected, the likely cause, the fix).
_SIDE_EFFECTS: tuple[tuple[str, str, str, str], ...] = (
    (
        "mutated",
        "the arguments are left exactly as they were passed",
        "the function writes into an argument (`x[i] = v` on a NumPy array, "
        "`list.append`, `dict[k] = v`) instead of building a new value",
        "build and return a new value: `x.at[i].set(v)` for arrays, a new list or dict "
        "for containers (`jnp.asarray(x)` first if the input may be NumPy)",
    ),
    (
        "rng",
        "the global NumPy and Python RNGs are untouched",
        "the function uses a global RNG (the one named above): its numbers come from state "
        "that no argument controls, and under jit a draw from it happens once, at trace time",
        "take a `jax.random` key as an argument and draw with `jax.random.*`",
    ),
    (
        "globals",
        "module-level state unchanged by a call",
        "the function keeps state in a global (a counter, a cache, a history list); "
        "under jit such writes happen once, at trace time",
        "pass state in as an argument and return its new value",
    ),
)


def _require_no_side_effect(seen: Mapping[str, Any], checked: str) -> None:
    """Fails the check on the first side effect `observe_calls` saw (`seen`): a mutated
    argument (named as the function names it), a global RNG used, a global changed."""
    __tracebackhide__ = True
    for key, expected, cause, fix in _SIDE_EFFECTS:
        found = seen[key]
        if found:
            observed = str(found)
            if key == "mutated":
                observed = _rename(observed, [str(n) for n in seen["names"]])
            raise fail(checked, expected=expected, observed=observed, cause=cause, fix=fix)


def _leaked(checked: str, leak: str) -> NoReturn:
    """Fail: a traced value outlived the trace (`jax.checking_leaks` saw `leak`)."""
    __tracebackhide__ = True
    fail(
        checked,
        expected="no traced value outlives the trace",
        observed=f"a traced value was stored outside the function while tracing "
        f"(jax.checking_leaks: {leak})",
        cause="a traced value was stored outside the function while jit traced it: what "
        "is kept is a tracer, not a value, and the store runs once, at trace time",
        fix="return the value instead of storing it (in a list, a global or an attribute); "
        "for logging use `jax.debug.print` / `jax.debug.callback`",
    )


def _rename(text: str, names: list[str]) -> str:
    """`the input[0][0][2]` -> `argument `x`[2]`."""
    for i, name in enumerate(names):
        prefix = f"the input[0][{i}]"
        if text.startswith(prefix):
            return f"argument `{name}`" + text[len(prefix) :]
    return text.replace("the input[1]", "keyword arguments")


@explainable
def assert_no_trace_side_effects(
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    what: str,
    static_argnames: Iterable[str] = (),
    module: Any = None,
    cause: str = "",
    fix: str = "",
) -> Any:
    """Under `jax.jit`, the first call (which traces) and the second (which does not) have
    the same Python-visible effects: the same printed text and the same module globals; and
    no traced value leaks out of the function (`jax.checking_leaks`). Returns the output.
    JAX caches the trace of a Python function (even across `jax.jit` wrappers), so an
    earlier check would hide a trace-time effect: the function (unwrapped, if the student
    jitted it) is traced in the sandbox through a new wrapper, which JAX has never seen."""
    __tracebackhide__ = True
    name = calls.name_of(fn)
    checked = f"side effects of {what} under jax.jit"
    seen = client.probe(
        observe_tracing, client.handle(fn), tuple(args), tuple(static_argnames), module
    )
    if seen["leak"]:
        _leaked(checked, str(seen["leak"]))
    out = calls.observed(
        seen["out"],
        checked=checked,
        attempted=f"jax.jit({name})(...)",
        expected="the function runs under jit",
    )
    outputs, changes = [str(o) for o in seen["outputs"]], list(seen["changes"])
    if len(outputs) == 2 and outputs[0] != outputs[1]:
        raise fail(
            checked,
            expected="the same printed output on every call",
            observed=f"the first (tracing) call printed {outputs[0][:120]!r}, the second "
            f"printed {outputs[1][:120]!r}",
            cause="a Python `print` runs only while jit traces the function"
            + (
                " (and shows tracers, not values)"
                if re.search(r"Tracer\b|Traced<", outputs[0])
                else ""
            )
            + ": the first call printed what later calls, which run the compiled program, "
            "do not",
            fix="use `jax.debug.print('x = {}', x)` to print values on every call, or remove it",
        )
    if len(changes) == 2 and changes[0] and not changes[1]:
        raise fail(
            checked,
            expected="the same effect on module state on every call",
            observed=f"during the first (tracing) call {changes[0]}; the second call changed nothing",
            cause="the function changes module state in Python, which runs only while jit "
            "traces it: under jit the change happens once, not once per call",
            fix="return what you want to keep; for logging use `jax.debug.callback`",
        )
    return out
