"""09 - optimizers built with keyword arguments and optax.inject_hyperparams-free chain."""

import optax


def make_schedule(peak_lr, warmup_steps, decay_steps):
    return optax.schedules.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=peak_lr,
        warmup_steps=warmup_steps,
        decay_steps=decay_steps,
        end_value=0.0,
    )


def make_optimizer(
    peak_lr=1e-3, warmup_steps=1000, decay_steps=50000, weight_decay=0.01, max_norm=1.0
):
    transforms = [
        optax.clip_by_global_norm(max_norm),
        optax.adamw(make_schedule(peak_lr, warmup_steps, decay_steps), weight_decay=weight_decay),
    ]
    return optax.chain(*transforms)
