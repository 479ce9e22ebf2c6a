"""A `drill`-like entry with only the lab subcommands (drill/cli.py may not exist yet)."""

from __future__ import annotations

import argparse

from drill import lab_cli


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="drill")
    lab_cli.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.func(args)
