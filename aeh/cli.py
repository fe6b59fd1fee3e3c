"""The `aeh` command. Each subcommand parses, calls the library, and prints.

Exit codes: `aeh.errors.ExitCode` (README's table lists them with what each means).
"""

from __future__ import annotations

import argparse
import atexit
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any, NoReturn

from aeh.commands import (
    EXIT_BAD_INPUT,
    EXIT_CANNOT_JUDGE,
    EXIT_INTERRUPTED,
    EXIT_INVALID_RUN,
    EXIT_NOT_ENOUGH_RUNS,
    EXIT_OK,
    EXIT_REGRESSION,
    register,
)
from aeh.commands import commands as _commands
from aeh.errors import HARNESS_ERROR_LIMIT, AehError, ExitCode

__all__ = ["EXIT_BAD_INPUT", "EXIT_CANNOT_JUDGE", "EXIT_INTERRUPTED", "EXIT_INVALID_RUN", "EXIT_NOT_ENOUGH_RUNS",
           "EXIT_OK", "EXIT_REGRESSION", "ExitCode", "build_parser", "console", "main"]


def _add_db(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", help="SQLite store (default: $AEH_DB, else the nearest runs.db walking up "
                                "from the working directory, else ./runs.db)")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The `aeh` parser: every command of the command registry (`aeh.commands`). Given the
    command line `argv`, only the command it names gets its options built (`aeh --help` and
    `aeh runs` need not import every importer and suite)."""
    parser = argparse.ArgumentParser(
        prog="aeh", description="Agent Eval Harness: run agents on task suites, many times, and report honest numbers.",
        epilog="Exit codes: 0 ok · 1 compare/gate found a regression, drift a decline · 2 bad input · "
               f"3 run not a valid measurement (harness errors > {HARNESS_ERROR_LIMIT:.0%}) · "
               "4 cannot judge (compare, gate, drift: "
               "an invalid or unfinished run, two suites, too few shared tasks or runs) · "
               "5 gate cannot judge: baseline from another suite · 6 store failure (resumable) · "
               "130 interrupted (Ctrl-C or SIGTERM)",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = None if argv is None else next((a for a in argv if not a.startswith("-")), "")
    register(sub, _add_db, only=chosen)
    return parser


class _Version(argparse.Action):
    """`--version`, read when asked: the version comes from package metadata (~0.05 s)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0,
                         help="show aeh's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        # importlib.metadata (~0.05 s) only for `aeh --version`
        from aeh._version import __version__

        print(f"aeh {__version__}")
        parser.exit()


def _terminate_as_interrupt(signum: int, frame: Any) -> None:
    # SIGTERM (kill, systemd, CI timeouts) stops as Ctrl-C does: asyncio's SIGINT handler, in
    # force while a run executes, cancels the run cleanly and it is stored as interrupted.
    # Where SIGINT is ignored (a background job of a script) or default, interrupt directly.
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not signal.default_int_handler:
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Parse `argv`, run the command, and turn an AehError into a clean exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate_as_interrupt) if in_main else None
    try:
        return int(_commands.get(args.command).main(args))
    except AehError as exc:
        print(f"aeh: error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", ExitCode.BAD_INPUT)
    except KeyboardInterrupt:
        print("aeh: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        # `aeh … | head` closed our stdout: stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.OK
    except OSError as exc:
        if exc.filename is None:
            raise
        # A path argument that cannot be read or written (a directory given as --out, a missing folder).
        print(f"aeh: error: {exc.filename}: {exc.strerror or exc} — pass a path to a file "
              "(in an existing folder you may write to)", file=sys.stderr)
        return ExitCode.BAD_INPUT
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _exit_without_teardown(code: int) -> NoReturn:
    """Exit with `code` once what an exit must do is done: the exit handlers run (logging, span
    exporters, Ray, temporary files) and stdout and stderr are flushed. The interpreter's teardown
    of every module and object is skipped: some 0.1 s of CPU after a report, where the command's
    own work is ~1 s (mypy's command line ends the same way). While another non-daemon thread
    lives, the ordinary exit runs instead, which waits for it."""
    others = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    if others:
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            pass
    os._exit(code)


def console() -> NoReturn:
    """The `aeh` console command: `main()` on the process's arguments, then a quick exit."""
    _exit_without_teardown(main())


if __name__ == "__main__":
    console()
