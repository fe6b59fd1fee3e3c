"""nbformat's notebook-schema validators, generated once per machine instead of once per report.

nbformat validates a notebook with fastjsonschema, which turns the schema into Python source and
compiles it the first time a process validates: some 0.05 s of CPU for the two validators a report
uses (papermill's read, nbconvert's export), every report. Inside `cached_schema_validators()` that
code is kept as marshalled bytecode in Jinja's bytecode-cache directory (the one `aeh report`'s
export keeps its compiled templates in: per user, created with mode 0700 and checked by Jinja),
keyed by the schema, fastjsonschema's version and the interpreter's. A missing, stale or unreadable
entry is generated again; validation itself is fastjsonschema's own function either way.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import CodeType
from typing import Any

__all__ = ["cached_schema_validators", "compiled_validator"]

_PREFIX = "aeh-nbschema-"


def _cache_dir(cache_dir: str | None) -> Path:
    import jinja2  # heavy: loaded on first use (nbconvert imports it anyway)

    # Jinja creates its default directory per user with mode 0700 and refuses one it does not own
    return Path(jinja2.FileSystemBytecodeCache(cache_dir).directory)


def _entry(directory: Path, definition: Any) -> Path:
    import fastjsonschema  # heavy: loaded on first use

    text = json.dumps(definition, sort_keys=True, ensure_ascii=False)
    key = hashlib.sha256(f"{fastjsonschema.VERSION}\0{sys.version}\0{text}".encode()).hexdigest()[:32]
    return directory / f"{_PREFIX}{key}.bin"


def _generated(definition: Any) -> tuple[str, CodeType]:
    """fastjsonschema's code for `definition` (`compile_to_code`, what its `compile` runs), compiled,
    with the name of its validating function."""
    import fastjsonschema  # heavy: loaded on first use
    from fastjsonschema.ref_resolver import RefResolver

    name = RefResolver.from_schema(definition, store={}).get_scope_name()
    return name, compile(fastjsonschema.compile_to_code(definition), f"<nbformat schema {name}>", "exec")


def _function(name: str, code: CodeType) -> Callable[..., Any] | None:
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # noqa: S102  # fastjsonschema's generated code, or this module's cache of it
    found = namespace.get(name)
    return found if callable(found) else None


def _load(path: Path) -> Callable[..., Any] | None:
    try:
        return _function(*marshal.loads(path.read_bytes()))
    except (OSError, ValueError, EOFError, TypeError, ImportError):
        return None  # not cached yet, or written by another version: generated again


def _store(path: Path, name: str, code: CodeType) -> None:
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-" + _PREFIX)
        with os.fdopen(fd, "wb") as out:
            out.write(marshal.dumps((name, code)))
        os.replace(tmp, path)  # readers see the whole entry or none
    except OSError:
        pass  # a read-only or full cache costs the next report the generation, nothing else


def compiled_validator(definition: Any, cache_dir: str | None = None) -> Callable[..., Any]:
    """fastjsonschema's validating function for `definition` (default options), from the cache
    when this machine generated it before."""
    import fastjsonschema  # heavy: loaded on first use

    try:
        path: Path | None = _entry(_cache_dir(cache_dir), definition)
    except (OSError, RuntimeError):  # Jinja refuses an unsafe or unwritable directory: no cache
        path = None
    found = _load(path) if path is not None else None
    if found is not None:
        return found
    name, code = _generated(definition)
    generated = _function(name, code)
    if generated is None:  # a fastjsonschema that names its function otherwise: its own compile
        return fastjsonschema.compile(definition)
    if path is not None:
        _store(path, name, code)
    return generated


class _CachingFastJsonSchema:
    """fastjsonschema as nbformat's validator module sees it, with `compile` served by the cache."""

    def __init__(self, module: Any, cache_dir: str | None) -> None:
        self._module, self._cache_dir = module, cache_dir

    def compile(self, definition: Any, *args: Any, **kwargs: Any) -> Callable[..., Any]:
        if args or kwargs:  # options the cache's key does not cover
            return self._module.compile(definition, *args, **kwargs)  # type: ignore[no-any-return]
        return compiled_validator(definition, self._cache_dir)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


@contextmanager
def cached_schema_validators(cache_dir: str | None = None) -> Iterator[None]:
    """Inside: the notebook validators nbformat creates come from the cache (`compiled_validator`).
    nbformat keeps a validator for the process once made, so the effect outlasts the block."""
    try:
        from nbformat import json_compat  # heavy: loaded on first use
    except ImportError:  # no nbformat: rendering says which extra to install
        yield
        return
    # the module global FastJsonSchemaValidator calls `compile` through
    real = json_compat.__dict__["fastjsonschema"]
    json_compat.__dict__["fastjsonschema"] = _CachingFastJsonSchema(real, cache_dir)
    try:
        yield
    finally:
        json_compat.__dict__["fastjsonschema"] = real
