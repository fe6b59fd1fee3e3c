"""Write docs/cli.md, the `aeh` command reference, from the argparse parser itself.

    python scripts/cli_docs.py            # rewrite docs/cli.md
    python scripts/cli_docs.py --check    # exit 1 when docs/cli.md is not current

Commands that other installed packages add through entry points are left out.

The page is built from `aeh.cli.build_parser()` (commands, nested actions, help strings and
options), not from `format_help()`, so it does not change with the terminal width or with
argparse's layout from one Python version to the next. tests/commands/test_cli_docs.py runs the check.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "cli.md"

HEADER = """\
# `aeh` command reference

Generated from the argument parser by `scripts/cli_docs.py`; do not edit by hand. After
changing a command or an option, run `python scripts/cli_docs.py` (the test suite checks that
this page is current). Exit codes and worked examples are in the README.
"""


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """Every (sub)command under `parser`, depth first: (words after `aeh`, help, its parser)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*path, name), helps.get(name, ""), sub
                yield from walk(sub, (*path, name))


def commands() -> list[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    from aeh.cli import build_parser

    return list(walk(build_parser()))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _option(action: argparse.Action) -> str:
    if action.option_strings:
        names = ", ".join(action.option_strings)
        if action.nargs == 0:
            return f"`{names}`"
        if action.choices:
            return f"`{names} {{{','.join(map(str, action.choices))}}}`"
        metavar = action.metavar or action.dest.upper()
        return f"`{names} {metavar}`"
    return f"`{action.metavar or action.dest}`"


def _options(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        notes = []
        if action.required and action.option_strings:
            notes.append("required")
        if isinstance(action, argparse._AppendAction) and "repeatable" not in (action.help or ""):
            notes.append("repeatable")
        help_text = _cell(action.help or "")
        if notes:
            help_text = f"({', '.join(notes)}) {help_text}".strip()
        rows.append(f"| {_option(action)} | {help_text} |")
    if not rows:
        return []
    return ["| option | meaning |", "| --- | --- |", *rows]


def render() -> str:
    lines = [HEADER]
    for path, help_text, parser in commands():
        lines += [f"{'#' * min(len(path) + 1, 4)} `aeh {' '.join(path)}`", "", _cell(help_text) or "(no help text)", ""]
        table = _options(parser)
        if table:
            lines += [*table, ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render()
    if argv == ["--check"]:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE.relative_to(REPO)} is out of date; run `python scripts/cli_docs.py`", file=sys.stderr)
            return 1
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(REPO)}")
    return 0


def _only_aeh_entry_points() -> None:
    """Hide entry points of other installed packages, so plugin commands stay out of the page.

    Runs before aeh is imported (this file is run as a script, in its own interpreter), so any
    `from importlib.metadata import entry_points` inside aeh binds the filtered function.
    """
    from importlib import metadata

    real = metadata.entry_points

    def own(**params):  # type: ignore[no-untyped-def]
        found = real(**params)
        if not params:
            return found
        return metadata.EntryPoints(ep for ep in found if getattr(ep.dist, "name", "aeh") == "aeh")

    metadata.entry_points = own  # type: ignore[assignment]


if __name__ == "__main__":
    _only_aeh_entry_points()
    sys.path.insert(0, str(REPO))
    sys.exit(main())
