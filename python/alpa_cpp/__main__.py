"""`python -m alpa_cpp --version`: the version, as `alpa --version` prints it."""

import argparse

from alpa_cpp import __version__


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m alpa_cpp",
                                     description="Alpa C++'s Python package.")
    parser.add_argument("--version", action="version", version=f"alpa {__version__}")
    parser.parse_args()
    parser.print_help()


if __name__ == "__main__":
    main()
