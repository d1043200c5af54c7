"""Public inputs of ex2_per_example_grads: the losses of ONE example the suite hands to
`per_example_grads`, `per_example_grad_norms` and `largest_gradient_examples`.

The suite names them with `client.Public("example_mlp_loss")` (the sandbox passes
these very functions to student code) and imports them to compute its references.
"""

import jax
import jax.numpy as jnp

from grader.sandbox.public_inputs import public


@public
def example_mlp_loss(
    params: dict[str, dict[str, jax.Array]], x: jax.Array, y: jax.Array
) -> jax.Array:
    """Cross-entropy of the lesson MLP for one example (layers applied in numeric order)."""
    h = x
    n = len(params)
    for i in range(1, n + 1):
        h = h @ params[f"layer{i}"]["w"] + params[f"layer{i}"]["b"]
        if i < n:
            h = jax.nn.relu(h)
    return -jax.nn.log_softmax(h)[y]


@public
def example_linear_loss(
    params: tuple[jax.Array, jax.Array], x: jax.Array, y: jax.Array
) -> jax.Array:
    """Squared error of a linear model whose params are a (w, b) tuple."""
    w, b = params
    return 0.5 * (jnp.dot(x, w) + b - y) ** 2
