"""09 - composable optimizers with Optax.

Optax splits "how to turn gradients into updates" from "apply the updates".
Every optimizer is a `GradientTransformation`: a pair of pure functions,

    state = tx.init(params)
    updates, state = tx.update(grads, state, params)
    params = optax.apply_updates(params, updates)

and bigger optimizers are built by chaining small ones. `optax.chain(a, b)`
feeds the gradients through `a`, then `a`'s output through `b`: ORDER MATTERS.

    optimizer = optax.chain(
        optax.clip_by_global_norm(1.0),                    # 1. tame the raw gradients
        optax.adamw(learning_rate=schedule, weight_decay=0.01),  # 2. then Adam + decay
    )

Clipping by global norm rescales the whole gradient pytree when its norm
(the square root of the sum of squares of every leaf) exceeds `max_norm`, so
one exploding batch cannot throw the parameters far. It must come BEFORE
Adam: Adam normalizes its input, so clipping Adam's output does almost
nothing, while clipping the gradients changes what Adam's moments remember.

`optax.adamw` is Adam with decoupled weight decay: it adds
`learning_rate * weight_decay * params` to the update, which is why `update`
needs `params`. Plain `optax.adam` has no decay at all.

A learning rate can be a schedule: a function from the step count to a
number. `optax.warmup_cosine_decay_schedule(init_value, peak_value,
warmup_steps, decay_steps)` rises linearly from `init_value` to `peak_value`
over `warmup_steps`, then follows a cosine down to `end_value` (0 by default)
at step `decay_steps` (counted from step 0, warm-up included) and stays
there. The optimizer's state keeps the step count, so the schedule advances
by itself with every `update`.
"""

import optax


def make_schedule(peak_lr, warmup_steps, decay_steps):
    """A warm-up + cosine-decay learning-rate schedule starting from 0.

    Exactly `optax.warmup_cosine_decay_schedule(0.0, peak_lr, warmup_steps,
    decay_steps)`: a function from the step count to the learning rate.
    """
    # TODO: build the schedule with optax.warmup_cosine_decay_schedule, starting at 0.0
    ### BEGIN SOLUTION
    return optax.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=peak_lr,
        warmup_steps=warmup_steps,
        decay_steps=decay_steps,
    )
    ### END SOLUTION


def make_optimizer(
    peak_lr=1e-3, warmup_steps=1000, decay_steps=50000, weight_decay=0.01, max_norm=1.0
):
    """Clip by global norm, then AdamW driven by `make_schedule(...)`.

    Exactly `optax.chain(optax.clip_by_global_norm(max_norm),
    optax.adamw(schedule, weight_decay=weight_decay))`, clip first.
    """
    # TODO: chain clip_by_global_norm(max_norm) BEFORE adamw(schedule, weight_decay=...)
    ### BEGIN SOLUTION
    schedule = make_schedule(peak_lr, warmup_steps, decay_steps)
    return optax.chain(
        optax.clip_by_global_norm(max_norm),
        optax.adamw(learning_rate=schedule, weight_decay=weight_decay),
    )
    ### END SOLUTION
