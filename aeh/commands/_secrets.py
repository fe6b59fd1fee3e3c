"""The redactor a command uses to write a stored run out (review packets, imported labels)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aeh.errors import AehError
from aeh.store import Redactor, redactor_for_run
from aeh.suite.loader import load_suite

__all__ = ["stored_run_redactor"]


def _suite_secrets(spec: Any) -> list[str]:
    if not spec:
        return []
    try:
        suite = load_suite(spec)
    except (AehError, OSError):  # the suite moved or no longer loads: the given secrets still apply
        return []
    return list(getattr(suite, "secrets", lambda: [])())


def stored_run_redactor(store: Any, run_id: str, secrets: Sequence[str] = ()) -> Redactor:
    """The run's own redaction (on unless it was stored raw on purpose), with the secrets of the
    suite it recorded (when that suite still loads) and `secrets` from the command line."""
    config = store.run_info(run_id).config
    return redactor_for_run(config).with_secrets([*_suite_secrets(config.get("suite_spec")), *secrets])
