"""`aeh tasks validate|list`: load suites and report every problem, or list a suite's tasks."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.errors import AehError, ExitCode

NAME = "tasks"
HELP = "validate or list a suite's tasks"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    tsub = parser.add_subparsers(dest="tasks_command", required=True, metavar="ACTION")
    v = tsub.add_parser("validate", help="load suites and report every problem (default: all shipped suites)")
    v.add_argument("--suite", action="append", help="suite name or directory (repeatable)")
    ls = tsub.add_parser("list", help="list a suite's tasks")
    ls.add_argument("--suite", required=True, help="suite name or directory")


def main(args: argparse.Namespace) -> int:
    # loaded when the command runs, so `aeh --help` stays fast
    from aeh.grading import preflight_problems
    from aeh.suite import CodingSuite, check_contract
    from aeh.suite.loader import load_suite

    if args.tasks_command == "list":
        suite = load_suite(args.suite)
        for t in suite.tasks():
            print(f"{t.id:<36} {t.category or '-':<20} tools={','.join(t.tools)}")
        return ExitCode.OK
    names = args.suite or _shipped_suites()
    failed = 0
    for name in names:
        try:
            suite = load_suite(name)
        except AehError as exc:
            failed += 1
            print(f"✗ {name}: {exc}")
            continue
        blocked = preflight_problems(suite)
        if blocked:  # nothing could run: say why instead of a table of 0/0 results
            failed += 1
            print("\n".join(f"  ✗ {p}" for p in blocked))
            print(f"✗ {name}: cannot be measured here — fix the above first")
            continue
        if isinstance(suite, CodingSuite):  # the fixture contract, run for real
            text, ok = check_contract(suite)
            print(text)
            if not ok:
                failed += 1
                print(f"✗ {name}: fixtures break the contract")
                continue
        print(f"✓ {name}: {len(suite.tasks())} tasks valid")
    return ExitCode.BAD_INPUT if failed else ExitCode.OK


def _shipped_suites() -> list[str]:
    # loaded when the command runs, so `aeh --help` stays fast
    from aeh.suite.builtin import available_builtin_suites

    return available_builtin_suites()
