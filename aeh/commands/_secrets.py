"""`--secret` for the commands that write runs, and the redactor a command uses to write a
stored run out (review packets, imported labels)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from aeh.errors import AehError

if TYPE_CHECKING:
    from aeh.store import Redactor, Store


__all__ = ["add_secret_argument", "stored_run_redactor"]


def add_secret_argument(parser: argparse.ArgumentParser, help: str | None = None) -> None:
    """`--secret VALUE` (repeatable) into `args.secrets`."""
    parser.add_argument("--secret", action="append", dest="secrets", default=[], metavar="VALUE",
                        help=help or "a value to redact from the stored run, beside the suite's secrets (repeatable)")


def _suite_secrets(spec: Any) -> list[str]:
    from aeh.suite.loader import load_suite  # heavy: loaded on first use (the parser stays light)

    if not spec:
        return []
    try:
        suite = load_suite(spec)
    except (AehError, OSError):  # the suite moved or no longer loads: the given secrets still apply
        return []
    return list(getattr(suite, "secrets", lambda: [])())


def stored_run_redactor(store: Store, run_id: str, secrets: Sequence[str] = ()) -> Redactor:
    """The run's own `Redactor` (on unless it was stored raw on purpose), with the secrets of the
    suite it recorded (when that suite still loads) and `secrets` from the command line."""
    from aeh.store import redactor_for_run  # heavy: loaded on first use (polars behind the store)

    config = store.run_info(run_id).config
    return redactor_for_run(config).with_secrets([*_suite_secrets(config.suite.location), *secrets])
