"""`aeh notebooks copy [DIR]`: editable copies of the shipped notebooks (default `notebooks/`);
`aeh notebooks strip`: notebooks as the checkout stores them; `aeh notebooks hook`: JupyterLab
saves the shipped notebooks that way."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.errors import ExitCode

NAME = "notebooks"
HELP = "copy the shipped notebooks to edit, or keep the shipped ones stored without outputs"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    sub = parser.add_subparsers(dest="action", required=True)
    copy = sub.add_parser("copy", help="copy every shipped notebook into DIR; an edited copy is kept unless --force")
    copy.add_argument("dir", nargs="?", default="notebooks", help="folder to copy into (default: notebooks)")
    copy.add_argument("--force", action="store_true",
                      help="overwrite copies that differ from the shipped notebooks (edits and saved outputs are lost)")
    strip = sub.add_parser("strip", help="rewrite notebooks without outputs, execution counts or run state, as the "
                                         "checkout stores the shipped ones")
    strip.add_argument("files", nargs="*", metavar="FILE",
                       help="notebooks to rewrite (default: the shipped notebooks)")
    hook = sub.add_parser("hook", help="make JupyterLab in this environment save the shipped notebooks without "
                                       "outputs (a Jupyter Server extension; a wheel install has it on)")
    hook.add_argument("--off", action="store_true", help="turn the hook off again")


def main(args: argparse.Namespace) -> int:
    if args.action == "strip":
        # loaded when the command runs, so `aeh --help` stays fast
        from aeh.report import strip_notebooks

        changed = strip_notebooks(args.files)
        print("\n".join(f"stripped {p}" for p in changed) or "every notebook was already stored without outputs")
        return ExitCode.OK
    if args.action == "hook":
        # loaded when the command runs, so `aeh --help` stays fast
        from aeh.report import set_save_hook

        path = set_save_hook(not args.off)
        print(f"removed {path}: JupyterLab saves the shipped notebooks as they are" if args.off else
              f"wrote {path}: JupyterLab started from this environment saves the shipped notebooks without "
              "outputs (restart a running JupyterLab)")
        return ExitCode.OK
    # loaded when the command runs, so `aeh --help` stays fast
    from aeh.report import copy_notebooks

    done = copy_notebooks(args.dir, force=args.force)
    print(done)
    print(f"open them with: jupyter lab {done.folder}")
    return ExitCode.OK
