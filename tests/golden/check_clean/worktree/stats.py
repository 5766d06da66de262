def total(xs):
    return sum(xs)


def mean(xs):
    return total(xs) / len(xs)
