def double(x):
    return 2 * x


def halve(x):
    return x / 2
