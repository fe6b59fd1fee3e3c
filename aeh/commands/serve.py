"""`aeh serve otlp --suite S`: an OTLP/HTTP receiver that grades the traces it is sent into one stored run.

An agent in any language points its OTLP exporter at `http://127.0.0.1:4318` (`POST /v1/traces`,
JSON or protobuf); each trace is graded when its root span arrives. Ctrl-C, SIGTERM,
`POST /v1/stop`, `--max-attempts N` or `--idle-timeout S` stop it: open traces are graded, the
run is marked finished and its table printed.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator

from aeh._util.hosts import is_loopback
from aeh.commands._exit import EXIT_BAD_INPUT, EXIT_INVALID_RUN, EXIT_OK
from aeh.commands._secrets import add_secret_argument

NAME = "serve"
HELP = "receive OTLP/HTTP traces from a running agent and grade them into one stored run"

_LOOPBACK = "127.0.0.1"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    sub = parser.add_subparsers(dest="protocol", required=True, metavar="PROTOCOL")
    p = sub.add_parser("otlp", help="an OTLP/HTTP trace receiver (POST /v1/traces, JSON or protobuf)")
    p.add_argument("--suite", required=True, help="the suite whose tasks the traces are graded against")
    p.add_argument("--host", help=f"address to listen on (default {_LOOPBACK}; another is reachable from "
                                  "the network and gets a warning)")
    p.add_argument("--port", type=int, default=4318, help="port to listen on (default 4318; 0 picks a free one)")
    p.add_argument("--run-id", help="id for the new run (default: generated)")
    p.add_argument("--task-attribute", default="aeh.task_id",
                   help="span or resource attribute holding the task id (default aeh.task_id)")
    p.add_argument("--attempt-attribute", default="aeh.attempt",
                   help="attribute holding the attempt number (default aeh.attempt; else numbered as they come)")
    p.add_argument("--max-attempts", type=int, help="stop once this many attempts are graded")
    p.add_argument("--idle-timeout", type=float, metavar="S", help="stop after S seconds without a request")
    p.add_argument("--queue-size", type=int, default=64,
                   help="requests waiting to be graded before clients are told to retry (429; default 64)")
    p.add_argument("--price-table", help="price table YAML for the recorded token counts")
    add_secret_argument(p, "a value to redact from the stored run (repeatable)")
    add_db(p)


@contextlib.contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """Ctrl-C and SIGTERM finish the run (grade what came, mark it finished) instead of killing it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in before:
        signal.signal(s, lambda *_: stop.set())
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def main(args: argparse.Namespace) -> int:
    from aeh.analysis import format_run_table, run_table  # heavy: loaded on first use
    from aeh.commands._new_store import check_new_run_id
    from aeh.importers import serve_otlp

    check_new_run_id(args.run_id)
    host = args.host or _LOOPBACK
    if args.host is not None and not is_loopback(host):
        print(f"warning: listening on {host}: anyone who can reach this address can send traces into the run",
              file=sys.stderr)

    def ready(bound: str, port: int) -> None:
        print(f"listening on http://{bound}:{port}/v1/traces (stop: Ctrl-C or POST /v1/stop)", flush=True)

    stop = threading.Event()
    with _stop_on_signals(stop):
        run_id = serve_otlp(args.suite, args.db, host=host, port=args.port, run_id=args.run_id,
                            task_attribute=args.task_attribute, attempt_attribute=args.attempt_attribute,
                            max_attempts=args.max_attempts, idle_timeout=args.idle_timeout,
                            queue_size=args.queue_size, secrets=args.secrets, price_table=args.price_table,
                            ready=ready, stop=stop)
    print(run_id)
    table = run_table(run_id, args.db)
    if not len(table):
        print(f"run {run_id} received no gradable traces", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(format_run_table(table))
    return EXIT_INVALID_RUN if table.invalid_measurement else EXIT_OK
