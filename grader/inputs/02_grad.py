"""Public inputs of 02_grad: the functions the suite hands to `derivative`,
`second_derivative` and `hessian`, and a probe that lists the equations of a jaxpr
with their shapes.

The suite names the functions with `client.Public("autodiff_wave")` (the sandbox passes
these very functions to student code); its references are analytic derivatives,
computed in the judge. `A` is the matrix of the quadratic term of `autodiff_bowl`,
which the reference Hessian needs too. The one-pass check of `mse_value_and_grad`
counts the forward products x @ w in its jaxpr: the jaxpr stays in the sandbox, so
`equation_shapes` reports each equation's primitive and operand shapes and the judge
decides which of them are forward products.
"""

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend import core as jex

from grader.probes import _calls
from grader.sandbox.probes import probe
from grader.sandbox.public_inputs import public

A = np.array(
    [[2.0, 1.0, 0.0, 0.0], [1.0, 3.0, 0.5, 0.0], [0.0, 0.5, 1.0, 0.0], [0.0, 0.0, 0.0, 4.0]]
)
A.setflags(write=False)


@public
def autodiff_offset(x: Any) -> Any:
    """x**3 + 1000: the constant offset makes a float32 finite difference round badly."""
    return x**3 + 1000.0


@public
def autodiff_wave(x: Any) -> Any:
    """sin(3x) * exp(x / 2): curved enough that a finite difference truncates badly."""
    return jnp.sin(3.0 * x) * jnp.exp(x / 2.0)


@public
def autodiff_bowl(v: Any) -> Any:
    """f: R^4 -> R with a dense, non-constant Hessian."""
    return jnp.sum(v**3) + 0.5 * v @ (jnp.asarray(A, jnp.float32) @ v) + jnp.exp(v[0] * v[1])


@public
def autodiff_bowl_offset(v: Any) -> Any:
    return autodiff_bowl(v) + 1000.0


@public
def autodiff_poly(v: Any) -> Any:
    """A cheaper f: R^4 -> R for the composition checks, which also run eagerly."""
    return jnp.sum(v**3) + v @ (jnp.asarray(A, jnp.float32) @ v)


def _shapes(atoms: Any) -> list[tuple[int, ...]]:
    return [tuple(int(d) for d in getattr(getattr(v, "aval", None), "shape", ())) for v in atoms]


def _equations(jaxpr: Any) -> Any:
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    for eqn in inner.eqns:
        yield eqn
        for sub in jex.jaxprs_in_params(eqn.params):
            yield from _equations(sub)


@probe
def equation_shapes(fn: Any, args: Any) -> Any:
    """In the sandbox: every equation of the jaxpr of `fn(*args)`, nested jaxprs included,
    as `{"primitive", "ins", "outs"}` (operand and result shapes); or the error tracing raised."""
    closed = _calls.attempt(lambda: jax.make_jaxpr(fn)(*args))
    if not hasattr(closed, "jaxpr"):
        return closed  # the error
    return [
        {"primitive": eqn.primitive.name, "ins": _shapes(eqn.invars), "outs": _shapes(eqn.outvars)}
        for eqn in _equations(closed)
    ]


@public
def autodiff_chain(v: Any) -> Any:
    """f: R^n -> R for any n >= 2, with a banded Hessian whose entries depend on v: a
    Hessian that only works in one dimension (a hard-coded `jnp.eye(4)`) fails on it."""
    return jnp.sum(v**4) / 4.0 + jnp.sum(jnp.sin(v[:-1]) * v[1:])
