"""The run store: SQLite (WAL) with redaction on write, migrations, and polars frame readers.

Redaction, migrations, liveness, the run plan and the attempt writer load at once; the names
that bring polars (the `Store` and everything built on it) load on first use, so the engine
and the plugin surface can import the store without a DataFrame library.
"""

import typing as _typing

from aeh._util.lazy import lazy_getattr as _lazy_getattr
from aeh.store._errors import AmbiguousRunIdError
from aeh.store._label_import import LabelLine, import_labels
from aeh.store._liveness import HEARTBEAT_S, STALE_AFTER_S, executing, host_name, owner_alive, run_is_dead
from aeh.store._migrations import (
    Migration,
    Migrations,
    applied_versions,
    migrate,
    migration,
    registered_migrations,
    schema,
)
from aeh.store._plan import outside_shard, parse_shard, plan_run_id
from aeh.store._redact import (
    MARKER,
    RedactingSink,
    Redactor,
    luhn_valid,
    redaction_record,
    redactor_for_run,
    secret_fingerprints,
)
from aeh.store._seams import RunReader, RunStore, RunWriter, StoreLike
from aeh.store._writer import MAX_BACKLOG, AttemptWriter

if _typing.TYPE_CHECKING:
    from aeh.store._discover import (
        DB_RULE,
        StoreLocation,
        default_db,
        locate_store,
        open_store,
        resolve_db_path,
        using_store,
    )
    from aeh.store._frames import ATTEMPTS_SCHEMA, GRADER_SCHEMA, SPANS_SCHEMA
    from aeh.store._label_pairs import JUDGE_KINDS, human_label_pairs, labels_frame, programmatic_verdicts
    from aeh.store._merge import MergeResult, merge_stores
    from aeh.store._pages import (
        AttemptFilter,
        AttemptPage,
        AttemptRow,
        RunPage,
        RunSummary,
        TaskCount,
        attempt_page,
        dimension_means,
        dimension_overall,
        run_choices,
        run_page,
    )
    from aeh.store._review import review_packets, write_review_jsonl
    from aeh.store._store import Store, open_stores, unclosed_stores

# heavy: loaded on first use (each of these modules imports polars)
_LAZY = {
    **dict.fromkeys(("DB_RULE", "StoreLocation", "default_db", "locate_store", "open_store", "resolve_db_path",
                     "using_store"), "aeh.store._discover"),
    **dict.fromkeys(("JUDGE_KINDS", "human_label_pairs", "labels_frame", "programmatic_verdicts"),
                    "aeh.store._label_pairs"),
    **dict.fromkeys(("MergeResult", "merge_stores"), "aeh.store._merge"),
    **dict.fromkeys(("AttemptFilter", "AttemptPage", "AttemptRow", "RunPage", "RunSummary", "TaskCount",
                     "attempt_page", "dimension_means", "dimension_overall", "run_choices", "run_page"),
                    "aeh.store._pages"),
    **dict.fromkeys(("review_packets", "write_review_jsonl"), "aeh.store._review"),
    **dict.fromkeys(("ATTEMPTS_SCHEMA", "GRADER_SCHEMA", "SPANS_SCHEMA"), "aeh.store._frames"),
    **dict.fromkeys(("Store", "open_stores", "unclosed_stores"), "aeh.store._store"),
}


__getattr__ = _lazy_getattr(__name__, _LAZY)


__all__ = [
    "ATTEMPTS_SCHEMA",
    "DB_RULE",
    "GRADER_SCHEMA",
    "HEARTBEAT_S",
    "JUDGE_KINDS",
    "MARKER",
    "MAX_BACKLOG",
    "SPANS_SCHEMA",
    "STALE_AFTER_S",
    "AmbiguousRunIdError",
    "AttemptFilter",
    "AttemptPage",
    "AttemptRow",
    "AttemptWriter",
    "LabelLine",
    "MergeResult",
    "Migration",
    "Migrations",
    "RedactingSink",
    "Redactor",
    "RunPage",
    "RunReader",
    "RunStore",
    "RunSummary",
    "RunWriter",
    "Store",
    "StoreLike",
    "StoreLocation",
    "TaskCount",
    "applied_versions",
    "attempt_page",
    "default_db",
    "dimension_means",
    "dimension_overall",
    "executing",
    "host_name",
    "human_label_pairs",
    "import_labels",
    "labels_frame",
    "locate_store",
    "luhn_valid",
    "merge_stores",
    "migrate",
    "migration",
    "open_store",
    "open_stores",
    "outside_shard",
    "owner_alive",
    "parse_shard",
    "plan_run_id",
    "programmatic_verdicts",
    "redaction_record",
    "redactor_for_run",
    "registered_migrations",
    "resolve_db_path",
    "review_packets",
    "run_choices",
    "run_is_dead",
    "run_page",
    "schema",
    "secret_fingerprints",
    "unclosed_stores",
    "using_store",
    "write_review_jsonl",
]
