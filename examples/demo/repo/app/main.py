from app.config import parse_cfg


def main():
    cfg = parse_cfg("app.cfg")
    print(cfg)


def reload():
    return parse_cfg("app.cfg")
