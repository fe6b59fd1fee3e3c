"""Import papermill and nbformat without the optional extras they load and reports never use.

Measured on a 2-core machine without byte-compiled files: jsonschema (under nbformat) imports
`rfc3987_syntax`, which builds a Lark grammar for its IRI format checks (1–3 s), and papermill's
I/O registry imports `pyarrow.fs` for HDFS paths (~0.3 s) and boto3 for s3:// paths (~0.2 s).
nbformat's schemas use no `format` keyword and reports read and write local files, so `aeh report`
imports both libraries with those modules reported absent. The effect lasts for this process only:
jsonschema checks no IRI format and papermill opens no hdfs:// or s3:// path; other imports of
those modules work again.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["LEAN_SKIPPED", "import_lean", "without_modules"]

#: Optional modules skipped while papermill and nbformat are imported.
LEAN_SKIPPED = ("rfc3987_syntax", "pyarrow.fs", "boto3")


@contextmanager
def without_modules(*names: str) -> Iterator[None]:
    """Inside: `import name` raises ImportError for modules not imported yet. After: it works again."""
    blocked = [n for n in names if n not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]  # the import system's "absent" marker
    try:
        yield
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def import_lean() -> None:
    """Import papermill (and with it nbformat and jsonschema) without `LEAN_SKIPPED`, once."""
    if "papermill" in sys.modules and "jsonschema" in sys.modules:
        return
    with without_modules(*LEAN_SKIPPED):
        try:
            # heavy: loaded on first use
            import papermill  # noqa: F401
        except ImportError:
            return  # not installed: rendering says which extra to install
