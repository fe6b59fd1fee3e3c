"""`aeh notebooks copy [DIR]`: editable copies of the shipped notebooks (default `notebooks/`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.errors import ExitCode

NAME = "notebooks"
HELP = "copy the shipped notebooks into a folder to open in JupyterLab (the shipped ones stay as they are)"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    copy = sub.add_parser("copy", help="copy every shipped notebook into DIR; an edited copy is kept unless --force")
    copy.add_argument("dir", nargs="?", default="notebooks", help="folder to copy into (default: notebooks)")
    copy.add_argument("--force", action="store_true",
                      help="overwrite copies that differ from the shipped notebooks (edits and saved outputs are lost)")


def main(args: argparse.Namespace) -> int:
    from aeh.report import copy_notebooks

    done = copy_notebooks(args.dir, force=args.force)
    print(done)
    print(f"open them with: jupyter lab {done.folder}")
    return ExitCode.OK
