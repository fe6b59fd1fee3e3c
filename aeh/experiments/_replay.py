"""Re-run a stored run through the `replay` adapter: same seed, attempts, tasks and faults.

The adapter (`aeh.adapters.replay`) plays one attempt back; this module orchestrates a whole
run, which needs the public `run_async`, so it sits at the face with the other experiments.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aeh.adapters.replay import ReplayAdapter
from aeh.api import run_async, run_sync
from aeh.errors import ConfigError
from aeh.models import RedactionRecord
from aeh.store import default_db, open_store, secret_fingerprints
from aeh.suite import EvalSuite, reload_run_suite, suite_location
from aeh.suite.loader import load_suite

__all__ = ["replay_run", "replay_run_async"]


async def replay_run_async(run_id: str, db: str | Path | None = None, suite: str | Path | EvalSuite | None = None, *,
                           concurrency: int | None = None, **options: Any) -> str:
    """Replay stored run `run_id` into a new run (parent_run_id = run_id); returns its id.

    The suite is `suite`, else the original run's `config.suite.location`. Same seed, attempts,
    tasks and fault profile as the original. Extra `options` go to `aeh.api.run_async`.
    """
    path = str(db or default_db())
    reader = open_store(path, must_exist=True)  # replays read a stored run
    try:
        info = reader.run_info(run_id)
    except BaseException:
        reader.close()
        raise
    if info.status != "finished":
        reader.close()
        # Its missing attempts would replay as harness errors into a run that calls itself finished.
        raise ConfigError(
            f"run {info.run_id} is {info.status}, not finished — replay needs every attempt; finish it "
            f"first with `aeh run --resume {info.run_id}`, then replay it"
        )
    spec = suite if suite is not None else info.config.suite.location
    if spec is None:
        reader.close()
        raise ConfigError(
            f"run {info.run_id} did not record which suite it ran (no config.suite.location) — "
            "pass the suite: `aeh replay --run-id ID --suite NAME_OR_DIR`"
        )
    try:
        # The stored suite must be the one measured; a given one may differ: that is the experiment.
        found = reload_run_suite(info, suite, check_given=False)
        loaded = found if found is not None else load_suite(spec)
        _carry_redaction(info.run_id, info.config.redaction, loaded, options)
    except BaseException:
        reader.close()
        raise
    adapter = ReplayAdapter(model=info.model, source_run_id=info.run_id, db=reader)
    config = {"replay_of": info.run_id, "source_adapter": info.adapter,
              "source_suite_hash": info.suite_hash, **dict(options.pop("config", None) or {})}
    if isinstance(spec, str | Path):
        config.setdefault("suite_spec", suite_location(spec))
    try:
        table = await run_async(
            loaded, adapter, attempts=info.attempts,
            concurrency=concurrency or info.concurrency, seed=info.seed, db=path,
            parent_run_id=info.run_id, tasks=options.pop("tasks", None) or info.config.tasks,
            fault_profile=info.fault_profile, config=config, **options,
        )
    finally:
        reader.close()
    return table.run_id


def _carry_redaction(run_id: str, record: RedactionRecord | None, suite: EvalSuite, options: dict[str, Any]) -> None:
    """Give the replay the original run's redaction: on or off as it was, and every configured
    secret it was redacted with. The replay re-runs the suite's tools, whose outputs hold those
    secrets again; a secret the caller did not pass again is an error, not a raw store."""
    if record is None:
        return
    options.setdefault("redact", record.enabled)
    recorded = set(record.secret_fingerprints)
    given = list(getattr(suite, "secrets", lambda: [])()) + list(options.get("secrets") or [])
    missing = recorded - set(secret_fingerprints(given, str(record.salt or "")))
    if missing and options["redact"]:
        raise ConfigError(
            f"run {run_id} was redacted with {len(missing)} configured secret(s) this replay was not "
            "given; the replayed tools would write them raw — pass them again: "
            "`aeh replay --run-id ID --secret VALUE` (repeatable) or replay_run(..., secrets=[...])"
        )


def replay_run(run_id: str, db: str | Path | None = None, suite: str | Path | EvalSuite | None = None,
               **options: Any) -> str:
    """Sync twin of `replay_run_async` (works in scripts and in Jupyter); returns the new run id."""
    return run_sync(replay_run_async(run_id, db, suite, **options))
