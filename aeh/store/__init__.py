"""The run store: SQLite (WAL) with redaction on write, migrations, and polars frame readers.

Redaction, migrations, liveness, the run plan and the attempt writer load at once; the names
that bring polars (the `Store` and everything built on it) load on first use, so the engine
and the plugin surface can import the store without a DataFrame library.
"""

import typing as _typing

# one unwrapped line a module, so these imports read as the `_NAMES` table below does
# isort: off
from aeh._util.lazy import lazy_exports as _lazy_exports
from aeh.store._errors import AmbiguousRunIdError
from aeh.store._liveness import HEARTBEAT_S, STALE_AFTER_S, executing, host_name, owner_alive, run_is_dead
from aeh.store._migrations import Migration, Migrations, applied_versions, migrate, migration, registered_migrations
from aeh.store._migrations import schema
from aeh.store._plan import outside_shard, parse_shard, plan_run_id
from aeh.store._redact import MARKER, RedactingSink, Redactor, luhn_valid, redaction_record, redactor_for_run
from aeh.store._redact import redactor_for_stored_text, rules_digest, secret_fingerprints
from aeh.store._seams import RunReader, RunStore, RunWriter, StoreLike
from aeh.store._totals import AGENT_BUCKETS, HARNESS_BUCKET, TASK_TOTALS
from aeh.store._writer import MAX_BACKLOG, AttemptWriter

if _typing.TYPE_CHECKING:
    from aeh.store._discover import DB_RULE, StoreLocation, default_db, locate_store, open_store, resolve_db_path
    from aeh.store._discover import using_store
    from aeh.store._frames import ATTEMPTS_SCHEMA, GRADER_SCHEMA, SPANS_SCHEMA
    from aeh.store._label_import import LabelLine, import_labels
    from aeh.store._label_pairs import JUDGE_KINDS, human_label_pairs, labels_frame, programmatic_verdicts
    from aeh.store._merge import MergeResult, merge_stores
    from aeh.store._pages import AttemptFilter, AttemptPage, AttemptRow, RunPage, RunSummary, TaskCount, attempt_page
    from aeh.store._pages import dimension_means, dimension_overall, run_choices, run_page
    from aeh.store._review import review_packets, write_review_jsonl
    from aeh.store._store import Store, open_stores, unclosed_stores
    # isort: on

# Names not imported above load on first use (each of these modules imports polars).
_NAMES: dict[str, tuple[str, ...]] = {
    "aeh.store._errors": ("AmbiguousRunIdError",),
    "aeh.store._label_import": ("LabelLine", "import_labels"),
    "aeh.store._liveness": ("HEARTBEAT_S", "STALE_AFTER_S", "executing", "host_name", "owner_alive", "run_is_dead"),
    "aeh.store._migrations": ("Migration", "Migrations", "applied_versions", "migrate", "migration",
                              "registered_migrations", "schema"),
    "aeh.store._plan": ("outside_shard", "parse_shard", "plan_run_id"),
    "aeh.store._redact": ("MARKER", "RedactingSink", "Redactor", "luhn_valid", "redaction_record", "redactor_for_run",
                          "redactor_for_stored_text", "rules_digest", "secret_fingerprints"),
    "aeh.store._seams": ("RunReader", "RunStore", "RunWriter", "StoreLike"),
    "aeh.store._totals": ("AGENT_BUCKETS", "HARNESS_BUCKET", "TASK_TOTALS"),
    "aeh.store._writer": ("MAX_BACKLOG", "AttemptWriter"),
    "aeh.store._discover": ("DB_RULE", "StoreLocation", "default_db", "locate_store", "open_store", "resolve_db_path",
                            "using_store"),
    "aeh.store._frames": ("ATTEMPTS_SCHEMA", "GRADER_SCHEMA", "SPANS_SCHEMA"),
    "aeh.store._label_pairs": ("JUDGE_KINDS", "human_label_pairs", "labels_frame", "programmatic_verdicts"),
    "aeh.store._merge": ("MergeResult", "merge_stores"),
    "aeh.store._pages": ("AttemptFilter", "AttemptPage", "AttemptRow", "RunPage", "RunSummary", "TaskCount",
                         "attempt_page", "dimension_means", "dimension_overall", "run_choices", "run_page"),
    "aeh.store._review": ("review_packets", "write_review_jsonl"),
    "aeh.store._store": ("Store", "open_stores", "unclosed_stores"),
}

__getattr__, __all__ = _lazy_exports(__name__, _NAMES)
