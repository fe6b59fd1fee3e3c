"""The run store: SQLite (WAL) with redaction on write, migrations, and polars frame readers."""

from aeh.store._migrations import (
    MIGRATION_MODULES,
    Migration,
    applied_versions,
    migrate,
    migration,
    register_migration_module,
    registered_migrations,
)
from aeh.store._redact import Redactor, luhn_valid
from aeh.store._rows import ATTEMPTS_SCHEMA, GRADER_SCHEMA, SPANS_SCHEMA
from aeh.store._errors import AmbiguousRunIdError
from aeh.store._store import Store
from aeh.store._discover import DB_RULE, StoreLocation, locate_store, open_store, resolve_db_path

__all__ = [
    "ATTEMPTS_SCHEMA",
    "DB_RULE",
    "GRADER_SCHEMA",
    "MIGRATION_MODULES",
    "SPANS_SCHEMA",
    "AmbiguousRunIdError",
    "Migration",
    "Redactor",
    "Store",
    "StoreLocation",
    "applied_versions",
    "locate_store",
    "luhn_valid",
    "migrate",
    "migration",
    "open_store",
    "register_migration_module",
    "registered_migrations",
    "resolve_db_path",
]
