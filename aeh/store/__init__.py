"""The run store: SQLite (WAL) with redaction on write, migrations, and polars frame readers."""

from aeh.store import (
    _labels,  # noqa: F401  (defines migration 2: every migration is known before a store opens)
    _owner_schema,  # noqa: F401  (defines migration 5, run owner and heartbeat)
    _scores_schema,  # noqa: F401  (defines migration 4, trajectory dimension scores)
    _timing_schema,  # noqa: F401  (defines migration 3, the attempt time split)
)
from aeh.store._discover import (
    DB_RULE,
    StoreLocation,
    default_db,
    locate_store,
    open_store,
    resolve_db_path,
    using_store,
)
from aeh.store._errors import AmbiguousRunIdError
from aeh.store._migrations import (
    Migration,
    Migrations,
    applied_versions,
    migrate,
    migration,
    registered_migrations,
    schema,
)
from aeh.store._redact import RedactingSink, Redactor, luhn_valid, redaction_record, redactor_for_run
from aeh.store._rows import ATTEMPTS_SCHEMA, GRADER_SCHEMA, SPANS_SCHEMA
from aeh.store._store import Store, open_stores, unclosed_stores

__all__ = [
    "ATTEMPTS_SCHEMA",
    "DB_RULE",
    "GRADER_SCHEMA",
    "SPANS_SCHEMA",
    "AmbiguousRunIdError",
    "Migration",
    "Migrations",
    "RedactingSink",
    "Redactor",
    "Store",
    "StoreLocation",
    "applied_versions",
    "default_db",
    "locate_store",
    "luhn_valid",
    "migrate",
    "migration",
    "open_store",
    "open_stores",
    "redaction_record",
    "redactor_for_run",
    "registered_migrations",
    "resolve_db_path",
    "schema",
    "unclosed_stores",
    "using_store",
]
