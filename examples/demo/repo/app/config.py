"""Configuration loading for the demo app."""


def parse_cfg(path):
    """Read a key=value config file into a dict."""
    result = {}
    with open(path) as fh:
        for line in fh:
            key, _, value = line.partition("=")
            if key.strip():
                result[key.strip()] = value.strip()
    return result
