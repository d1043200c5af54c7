"""03_jit with the wrong structure (see wrong_structure.py) and, at import, the grader's
structural evidence patched to describe honest twins instead."""
import jax
import jax.export
import jax.numpy as jnp

import grader.probes.jaxpr as _jaxpr
import grader.probes.exported as _exported
import grader.sandbox.probes as _probes


def piecewise(x):
    return jnp.where(x > 0, x**2, -x)


def running_sum(xs):
    total, partial = jnp.zeros((), xs.dtype), []
    for i in range(xs.shape[0]):
        total = total + xs[i]
        partial.append(total)
    return total, jnp.stack(partial)


def newton_sqrt(a, n_iters=20):
    x = jnp.maximum(a, 1.0)
    for _ in range(n_iters):
        x = 0.5 * (x + a / x)
    return x


# -- the honest twins the forged evidence describes --
def _twin_piecewise(x):
    return jax.lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)


def _twin_running_sum(xs):
    return jax.lax.scan(lambda t, x: (t + x, t + x), jnp.zeros((), xs.dtype), xs)


def _twin_newton_sqrt(a, n_iters=20):
    return jax.lax.fori_loop(0, n_iters, lambda i, g: 0.5 * (g + a / g), jnp.maximum(a, 1.0))


_TWINS = {piecewise: _twin_piecewise, running_sum: _twin_running_sum, newton_sqrt: _twin_newton_sqrt}


def _twin(fn):
    inner = fn
    while hasattr(inner, "func"):
        inner = inner.func
    for name in ("piecewise", "running_sum", "newton_sqrt"):
        if name in getattr(fn, "__name__", "") or name in getattr(inner, "__name__", ""):
            return _TWINS[globals()[name]]
    return _TWINS.get(inner, fn)


_real_make_jaxpr = jax.make_jaxpr
_real_export = jax.export.export
jax.make_jaxpr = lambda fn, *a, **k: _real_make_jaxpr(_twin(fn), *a, **k)
jax.export.export = lambda fn, *a, **k: _real_export(_twin(getattr(fn, "__wrapped__", fn)), *a, **k)


def _fake_summary(fn, args, kwargs, static_argnames):
    return {"counts": {"cond": 1, "scan": 1, "while": 1, "case": 1}, "text": ""}


def _fake_export(fn, args, kwargs, static_argnames):
    twin = _twin(fn)
    return _exported_real(twin, args, kwargs, static_argnames)


_exported_real = _exported.export_program
for _name in list(_probes.REGISTRY):
    if _name.endswith(":summarize"):
        _probes.REGISTRY[_name] = _fake_summary
    if _name.endswith(":export_program"):
        _probes.REGISTRY[_name] = _fake_export
_jaxpr.summarize = _fake_summary
_exported.export_program = _fake_export
_exported._export = jax.export.export
