def add(a, b):
    return a + b + 1


def sub(a, b):
    return a - b
