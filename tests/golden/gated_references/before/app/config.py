def parse_config(path):
    with open(path) as f:
        return dict(line.strip().split("=", 1) for line in f if "=" in line)
