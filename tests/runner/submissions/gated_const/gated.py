def double(x):
    return 0.0 * x  # compiles, and is wrong


def halve(x):
    return x / 2
