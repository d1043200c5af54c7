"""09 - composable optimizers, with type hints and a frozen dataclass of settings."""

from __future__ import annotations

import dataclasses

import optax


@dataclasses.dataclass(frozen=True)
class Settings:
    peak_lr: float = 1e-3
    warmup_steps: int = 1000
    decay_steps: int = 50000
    weight_decay: float = 0.01
    max_norm: float = 1.0


def make_schedule(peak_lr: float, warmup_steps: int, decay_steps: int) -> optax.Schedule:
    """Linear warm-up from 0 to peak_lr, then cosine decay to 0 at decay_steps."""
    return optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=peak_lr, warmup_steps=warmup_steps, decay_steps=decay_steps
    )


def _build(s: Settings) -> optax.GradientTransformation:
    schedule = make_schedule(s.peak_lr, s.warmup_steps, s.decay_steps)
    return optax.chain(
        optax.clip_by_global_norm(s.max_norm),
        optax.adamw(learning_rate=schedule, weight_decay=s.weight_decay),
    )


def make_optimizer(
    peak_lr: float = 1e-3,
    warmup_steps: int = 1000,
    decay_steps: int = 50000,
    weight_decay: float = 0.01,
    max_norm: float = 1.0,
) -> optax.GradientTransformation:
    """Clip by global norm first, then AdamW on the schedule."""
    return _build(Settings(peak_lr, warmup_steps, decay_steps, weight_decay, max_norm))


if __name__ == "__main__":
    sched = make_schedule(1e-3, 10, 100)
    print([float(sched(s)) for s in (0, 5, 10, 50, 100)])
