"""Schema migration 7: each run's config from one flat JSON object to typed parts.

Before, `runs.config` was a free object of ~30 keys (the stored spec as `run_spec`, the suite's
location as `suite_spec`, `harness_health`, `live_checks`, `redaction`, `shard`, `merged_from`,
the suite's and adapter's own facts beside them, the adapter options and connection limit a
second time). Now it is the JSON of `aeh.models.RunConfig`: `spec`, `suite` (location + hash),
`health`, `redaction`, `provenance` (shard, merged_from), `live_checks`, a few typed facts of the
harness, and `facts` for the suite's and adapter's own. The mapping is
`aeh.models.LEGACY_CONFIG_KEYS`; an aeh older than this refuses the store with the upgrade hint
(`_check_not_newer`), as it does for every newer schema.
"""

from __future__ import annotations

import json
import sqlite3

from aeh.models import nest_legacy_config


def typed_run_config(conn: sqlite3.Connection) -> None:
    """runs.config rewritten in the typed shape, with the suite hash beside the suite's location."""
    rows = conn.execute("SELECT run_id, suite_hash, config FROM runs").fetchall()
    for run_id, suite_hash, text in rows:
        flat = json.loads(text or "{}")
        nested = nest_legacy_config(flat if isinstance(flat, dict) else {})
        nested.setdefault("suite", {})["hash"] = suite_hash
        conn.execute("UPDATE runs SET config = ? WHERE run_id = ?", (json.dumps(nested, sort_keys=True), run_id))
