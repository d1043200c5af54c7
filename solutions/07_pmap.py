"""07 - data parallelism across devices.

Data parallelism is the simplest way to use several accelerators: every
device holds a copy of the parameters, each sees a different slice of the
batch, and after the backward pass the devices average their gradients so
that every copy takes the same step.

`jax.pmap` writes the per-device program for you. You write the function for
ONE device; `pmap` runs a copy of it on every device, mapping over the
leading axis of its inputs (axis 0 becomes "which device"):

    xs = shard(x, n_devices)                  # (B, ...) -> (n_devices, B // n_devices, ...)
    step = jax.pmap(device_step, axis_name="devices")
    out = step(xs)                            # out has a leading axis of n_devices

Inside the mapped function, collectives talk across devices by the axis
name: `jax.lax.psum(x, "devices")` adds `x` over all devices and gives every
device the total, `jax.lax.pmean(x, "devices")` gives every device the mean.
Without one, each device only ever sees the gradient of its own slice.

Why the mean of the per-device gradients is the full-batch gradient: if the
loss is a mean over examples and every device holds the same number of them,
the mean of the shard means is the mean over the whole batch. `psum` instead
of `pmean` gives a gradient `n_devices` times too large.

`in_axes` says what is mapped: `in_axes=(None, 0, 0)` broadcasts the params
to every device and splits the data. (pmap is the classic API; newer code
writes the same program with `jax.shard_map`, which `pmap` now lowers to.)

On a CPU you can rehearse all of this with simulated devices: set
`XLA_FLAGS=--xla_force_host_platform_device_count=8` before JAX starts and
`jax.devices()` lists 8 CPU devices.
"""

import jax

AXIS = "devices"


def shard(x, n_devices):
    """Reshape a batch `(B, ...)` to `(n_devices, B // n_devices, ...)`.

    Row `i * (B // n_devices) + j` of `x` becomes `out[i, j]`: device `i` gets
    the `i`-th consecutive slice. `n_devices` is a Python int dividing `B`.
    """
    # TODO: reshape x so the leading axis has one entry per device
    ### BEGIN SOLUTION
    batch = x.shape[0]
    if batch % n_devices:
        raise ValueError(f"a batch of {batch} does not split evenly over {n_devices} devices")
    return x.reshape((n_devices, batch // n_devices, *x.shape[1:]))
    ### END SOLUTION


def parallel_mean_grads(loss_fn, params, xs, ys):
    """Gradients of `loss_fn(params, x, y)`, averaged across devices, one copy per device.

    `xs` and `ys` carry a leading device axis (see `shard`); `params` is one
    pytree shared by all devices. Use `jax.pmap(..., axis_name=...)` over a
    function that computes one device's gradient with `jax.grad` and averages
    it with `jax.lax.pmean`. Returns a pytree like `params` whose leaves have a
    leading axis of `xs.shape[0]`, every entry the same averaged gradient.
    """

    # TODO: pmap a per-device gradient over the device axis and pmean it across devices
    ### BEGIN SOLUTION
    def device_grads(params, x, y):
        grads = jax.grad(loss_fn)(params, x, y)
        return jax.lax.pmean(grads, axis_name=AXIS)

    return jax.pmap(device_grads, axis_name=AXIS, in_axes=(None, 0, 0))(params, xs, ys)
    ### END SOLUTION
