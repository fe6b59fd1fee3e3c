"""`aeh export otel RUN [--out FILE] [--endpoint URL]`: a stored run's spans as OpenTelemetry.
`aeh export run-card RUN [--out DIR]`: per attempt `results.json` and `run_card.md`.

`--out` writes OTLP JSON (default `<run id>.otlp.json`); `--endpoint` sends the spans to an
OTLP/HTTP collector (needs the `otel` extra). GenAI semantic conventions (`gen_ai.*`), aeh's own
attributes under `aeh.*`; `aeh import otel FILE --suite S` reads the file back.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from aeh.errors import ExitCode

NAME = "export"
HELP = "export a stored run's spans as OpenTelemetry, or its per-attempt run cards"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    sub = parser.add_subparsers(dest="format", required=True, metavar="FORMAT")
    p = sub.add_parser("otel", help="OTLP JSON, GenAI semantic conventions")
    p.add_argument("run_id", metavar="RUN", help="run id (or unique prefix)")
    p.add_argument("--out", help="OTLP JSON file to write (default: RUN.otlp.json unless --endpoint is given)")
    p.add_argument("--endpoint", help="OTLP/HTTP collector URL, e.g. http://localhost:4318 (sends the spans)")
    add_db(p)
    c = sub.add_parser("run-card", help="per attempt results.json + run_card.md (verdict, public/hidden "
                                        "tests, hidden-set SHA-256, sandbox, reproduce command)")
    c.add_argument("run_id", metavar="RUN", help="run id (or unique prefix)")
    c.add_argument("--out", help="folder to write into (default: RUN.cards)")
    add_db(c)


def main(args: argparse.Namespace) -> int:
    if args.format == "run-card":
        return _run_card(args)
    from aeh.importers import run_to_otlp  # heavy: the store
    from aeh.store import default_db

    db = args.db or default_db()
    document = run_to_otlp(args.run_id, db)
    n = sum(len(ss["spans"]) for rs in document["resourceSpans"] for ss in rs["scopeSpans"])
    resource = document["resourceSpans"][0]["resource"]["attributes"]
    run_id = next(kv["value"]["stringValue"] for kv in resource if kv["key"] == "aeh.run_id")
    if args.out or not args.endpoint:
        out = Path(args.out or f"{run_id}.otlp.json")
        out.write_text(json.dumps(document), encoding="utf-8")
        print(f"wrote {n} spans of run {run_id} to {out}")
    if args.endpoint:
        # the otel extra's exporter only with --endpoint
        from aeh.importers import send_otlp

        sent = send_otlp(document, args.endpoint)
        print(f"sent {sent} spans of run {run_id} to {args.endpoint}")
    return ExitCode.OK


def _run_card(args: argparse.Namespace) -> int:
    from aeh.importers import write_run_cards  # heavy: the store
    from aeh.store import default_db

    out = args.out or f"{args.run_id}.cards"
    written = write_run_cards(args.run_id, out, args.db or default_db())
    print(f"wrote results.json and run_card.md for {len(written)} attempt(s) under {out}")
    return ExitCode.OK
