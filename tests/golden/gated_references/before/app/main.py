from app.config import parse_config


def main():
    config = parse_config("app.cfg")
    print(config)
