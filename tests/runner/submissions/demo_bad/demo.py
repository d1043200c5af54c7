def double(x):
    return 3 * x


def halve(x):
    return x / 2 if x > 0 else x
