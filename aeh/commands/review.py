"""`aeh review --run-id ID`: list the attempts flagged for human review; export / import labels."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh.commands._secrets import add_secret_argument
from aeh.errors import ExitCode

NAME = "review"
HELP = "list attempts flagged for human review; --export them as JSONL, --import labels back"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("--run-id", required=True, help="run id (or unique prefix)")
    parser.add_argument("--export", metavar="OUT.jsonl",
                        help="write one review packet per line; set each line's \"label\" to true/false")
    parser.add_argument("--import", dest="import_path", metavar="LABELS.jsonl",
                        help="import labelled lines (label true = the agent succeeded); they feed "
                             "`aeh judge-agreement` as the rater \"human\"")
    parser.add_argument("--all", action="store_true", dest="include_unflagged",
                        help="export every attempt, not only flagged ones (so successes get labels too)")
    add_secret_argument(parser, "a value to redact from the export and imported notes (repeatable)")
    add_db(parser)


def _label(value: object) -> str:
    return "-" if value is None else ("pass" if value else "fail")


def main(args: argparse.Namespace) -> int:
    # heavy: loaded on first use
    from aeh.commands._secrets import stored_run_redactor
    from aeh.store import import_labels, open_store, review_packets, write_review_jsonl

    with open_store(args.db, must_exist=True) as store:
        run_id = store.resolve_run_id(args.run_id)
        redactor = stored_run_redactor(store, run_id, args.secrets)
        if args.import_path:
            store.redactor = store.redactor.with_secrets(redactor.secrets)  # notes get the run's secrets too
            n = import_labels(store, args.import_path)
            print(f"imported {n} label(s) into run {run_id}")
        packets = redactor.redact(review_packets(store, run_id, include_unflagged=args.include_unflagged))
        flagged = [p for p in packets if p["flagged"]]
        print(f"run {run_id}: {len(flagged)} attempt(s) flagged for human review")
        for p in flagged:
            print(f"  {p['task_id']:<34} #{p['attempt']:<3} label={_label(p['label']):<5} {p['reason']}")
        if args.export:
            path = write_review_jsonl(packets, args.export, redactor)
            print(f"exported {len(packets)} packet(s) to {path} — set \"label\" to true/false, then "
                  f"`aeh review --run-id {run_id} --import {path}`")
    return ExitCode.OK
