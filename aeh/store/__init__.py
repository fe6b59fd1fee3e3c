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

__all__ = [
    "ATTEMPTS_SCHEMA",
    "GRADER_SCHEMA",
    "MIGRATION_MODULES",
    "SPANS_SCHEMA",
    "AmbiguousRunIdError",
    "Migration",
    "Redactor",
    "Store",
    "applied_versions",
    "luhn_valid",
    "migrate",
    "migration",
    "register_migration_module",
    "registered_migrations",
]
