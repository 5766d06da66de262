def greet(name):
    message = "Hello, " + name
    return message


def farewell(name):
    return "Bye, " + name
