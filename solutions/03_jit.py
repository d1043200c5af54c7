"""03 - jax.jit and structured control flow.

`jax.jit(f)` does not run `f` on your numbers the first time: it TRACES it. Every
argument is replaced by an abstract tracer that knows only its shape and dtype,
`f` runs once on those tracers, and JAX records the operations as a jaxpr that XLA
compiles. Later calls with the same shapes reuse the compiled program and never
touch your Python code again.

Two consequences shape everything in this file:

1. Python control flow sees tracers, not values. `if x > 0:` on a tracer raises
   `TracerBoolConversionError`, because while tracing there is no value to test.
   Branch with `jax.lax.cond(pred, true_fn, false_fn, operand)`: both branches are
   traced, and the choice is made when the program runs.
2. A Python loop runs while tracing and is UNROLLED: a loop of n steps records n
   copies of its body, so the program grows with n (and so does compile time).
   `jax.lax.scan(step, init, xs)` and `jax.lax.fori_loop(lower, upper, body, init)`
   record the body once and loop inside the compiled program.

You can look at what JAX recorded with `jax.make_jaxpr(f)(example_args)`: a
`cond`, a `scan` or a `while` there shows that the structured primitive was used.
"""

import jax  # noqa: F401 - the tools you will need
import jax.numpy as jnp  # noqa: F401
from jax import lax  # noqa: F401


def piecewise(x):
    """Return `x ** 2` if `x > 0`, else `-x`, for a scalar `x` (traced under jit).

    Use `jax.lax.cond(x > 0, true_fn, false_fn, x)`: `true_fn` and `false_fn`
    each take the operand and return a value of the same shape and dtype. A
    Python `if x > 0:` fails under `jax.jit` (`TracerBoolConversionError`), and
    `jnp.where` would compute both branches and pick one: this exercise asks
    for a real branch, which shows up as a `cond` in the jaxpr.
    """
    # TODO: branch on x > 0 with jax.lax.cond (true branch x ** 2, false branch -x)
    ### BEGIN SOLUTION
    return lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)
    ### END SOLUTION


def running_sum(xs):
    """Return `(total, partial_sums)` for a 1-D array `xs`.

    `partial_sums[i] = xs[0] + ... + xs[i]` (same shape as `xs`) and `total` is
    the sum of all elements (a scalar). Use `jax.lax.scan(step, init, xs)`:
    `step(carry, x)` gets the running total so far and one element, and returns
    `(new_carry, output_for_this_element)`; `scan` returns `(final_carry,
    stacked_outputs)`. Start the carry at zero of `xs`'s dtype. A Python loop
    over `xs` gives the same numbers but unrolls into one copy of its body per
    element.
    """
    # TODO: carry the running total through jax.lax.scan and emit it at every step
    ### BEGIN SOLUTION
    xs = jnp.asarray(xs)

    def step(total, x):
        total = total + x
        return total, total

    return lax.scan(step, jnp.zeros((), xs.dtype), xs)
    ### END SOLUTION


def newton_sqrt(a, n_iters=20):
    """Return sqrt(a) for `a > 0` by `n_iters` steps of Newton's method.

    One Newton step for the root of `x**2 - a` is `x <- 0.5 * (x + a / x)`.
    Start from any positive guess that converges within 20 steps for `a` in
    [1e-2, 1e4] (for example `a` itself, or `(a + 1) / 2`). Use
    `jax.lax.fori_loop(0, n_iters, body, x0)` with `body(i, x)` returning the
    next `x`. `n_iters` is a Python int (static under `jax.jit`); `a` is
    traced. A Python `for` loop would unroll into `n_iters` copies of the step.
    """
    # TODO: run the Newton step n_iters times with jax.lax.fori_loop
    ### BEGIN SOLUTION
    a = jnp.asarray(a, jnp.float32)

    def body(i, x):
        return 0.5 * (x + a / x)

    return lax.fori_loop(0, n_iters, body, (a + 1.0) / 2.0)
    ### END SOLUTION
