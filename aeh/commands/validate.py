"""`aeh validate FIXTURE…`: the coding-fixture contract, run for real, per fixture or folder.

Each path is one fixture (it holds `task.json`), a folder of them, or a coding suite directory.
The same checks as `aeh tasks validate` run on each: the schema, the layout, then the tests —
the seed passes every public test and fails at least one hidden test, the reference passes all.
Exit codes are the coding harness's, whose command this is: 0 when every fixture keeps the
contract, 1 otherwise (every problem as `file:field: what — fix`). aeh's own `aeh tasks validate`
keeps aeh's (2).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from aeh.commands._exit import EXIT_OK
from aeh.errors import AehError

#: The coding harness's code for a harness or contract error.
EXIT_CONTRACT = 1

NAME = "validate"
HELP = ("check coding fixtures (task.json folders) against the contract, running their tests; exit 0 when "
        "every fixture keeps it, 1 when one does not (the coding harness's codes)")


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("fixtures", nargs="+", metavar="FIXTURE",
                        help="a fixture directory (with task.json), a folder of fixtures, or a coding suite")
    parser.add_argument("--no-grading-sandbox", action="store_true",
                        help="run the tests with the network (by default it is denied where a sandbox exists)")


def _check_one(path: str, grading_sandbox: bool) -> bool:
    # loaded when the command runs, so `aeh --help` stays fast
    from aeh.grading import preflight_problems
    from aeh.suite import CodingSuite, check_contract
    from aeh.suite.loader import load_suite

    if not Path(path).expanduser().is_dir():
        print(f"✗ {path}:(path): no such directory — pass a fixture directory holding task.json, or a folder of them")
        return False
    try:
        suite = load_suite(path)
    except AehError as exc:
        print(f"✗ {path}: {exc}")
        return False
    if not isinstance(suite, CodingSuite):
        print(f"✗ {path}:(path): not a coding fixture (no task.json, and no suite.yaml of kind coding_fixtures) "
              "— add task.json with id, title, prompt, entry_files, timeout_seconds, taxonomy")
        return False
    blocked = preflight_problems(suite)
    if blocked:  # nothing could run: say why instead of a table of 0/0 results
        print("\n".join(f"  ✗ {p}" for p in blocked))
        print(f"✗ {path}: cannot be checked here — fix the above first")
        return False
    text, ok = check_contract(suite, grading_sandbox=grading_sandbox)
    print(text)
    print(f"✓ {path}: {len(suite.tasks())} fixture(s) keep the contract" if ok
          else f"✗ {path}: fixtures break the contract")
    return ok


def main(args: argparse.Namespace) -> int:
    results = [_check_one(p, not args.no_grading_sandbox) for p in args.fixtures]
    return EXIT_OK if all(results) else EXIT_CONTRACT
