import jax

def piecewise(x):
    return x


def running_sum(xs):
    return xs, xs


def newton_sqrt(a, n_iters=20):
    return a
