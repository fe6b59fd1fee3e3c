"""Import papermill, nbformat and nbconvert without the optional extras they load and reports never use.

Measured on a 2-core machine without byte-compiled files: jsonschema (under nbformat) imports
`rfc3987_syntax`, which builds a Lark grammar for its IRI format checks (1–3 s), and papermill's
I/O registry imports `pyarrow.fs` for HDFS paths (~0.3 s) and boto3 for s3:// paths (~0.2 s).
jsonschema's other format checkers import their own libraries (arrow through isoduration,
webcolors, uri_template, fqdn, jsonpointer, the RFC 3339/3986 validators). nbformat's schemas use
no `format` keyword and reports read and write local files, so `aeh report` imports these
libraries with those modules reported absent. So is nbconvert's `--post serve` post-processor, whose
import (optional in nbconvert: it is None where tornado's web server is missing) brings tornado's
HTTP server and client, `webbrowser` and `multiprocessing`. The effect lasts for this process only:
jsonschema checks none of those formats, papermill opens no hdfs:// or s3:// path and a report
serves nothing; other imports of those modules work again.

papermill also imports `requests` (for http:// notebooks) and `click` (for its command line)
at import time, used only inside functions a report never calls: they are imported lazily
(`importlib.util.LazyLoader`: the module runs on first attribute access), as are they for any
later user in this process. So are two libraries nbconvert's BeautifulSoup imports at its top and
reports never call (aeh's export has no BeautifulSoup pass): `soupsieve` (CSS selectors, whose
grammar alone is some 30 ms) and `charset_normalizer` (encoding detection of bytes). So are
`platformdirs` (jupyter_core's per-user directories; a report finds its templates without them),
`tinycss2` and `webencodings` (bleach's CSS sanitizer, which a report never runs) and `colorama`.

`lean_render()` holds, around one report's render, the modules a report's cells import without
using them: `scipy.special` (the normal and t quantiles of every interval) clones numpy's whole
namespace (`scipy._lib.array_api_compat`), which imports numpy's f2py (some 50 ms of Fortran
parsing tables), testing, polynomial and ctypeslib packages; they are imported lazily.

papermill also scans every installed distribution for plugin I/O handlers and engines (two
`entrypoints` scans, ~0.02 s): a report reads and writes local files with aeh's own engine, so
`import_lean` imports papermill with those scans finding nothing (`PAPERMILL_PLUGIN_GROUPS`).

A version of papermill, nbconvert, bs4 or scipy that used one of these at import would load it at
once: `tests/report/test_lean_imports.py` fails then, rather than the saving going silently.

Byte-compiled, the lean and lazy imports save about 0.18 s of CPU of
the ~0.85 s papermill and nbconvert add to `import aeh, pandas, matplotlib.pyplot` (measured by
benchmarks/report_time.py's imports row). The serve post-processor and the four lazy modules after
`charset_normalizer` came later: 48 modules fewer run, and importing papermill and nbconvert this
way cost 0.604 s of CPU against 0.637 s without them (medians of 41 fresh processes, interleaved).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

__all__ = ["LAZY", "LAZY_IN_RENDER", "LEAN_SKIPPED", "PAPERMILL_PLUGIN_GROUPS", "import_lean", "lazily", "lean_render",
           "without_modules", "without_plugin_scan"]

#: Optional modules skipped while papermill, nbformat and nbconvert are imported.
LEAN_SKIPPED = ("rfc3987_syntax", "pyarrow.fs", "boto3", "isoduration", "webcolors", "uri_template", "fqdn",
                "jsonpointer", "rfc3339_validator", "rfc3986_validator", "nbconvert.postprocessors.serve")
#: Modules papermill and nbconvert (through bs4) import at their top and use only in functions a
#: report never calls.
LAZY = ("requests", "click", "soupsieve", "charset_normalizer", "platformdirs", "tinycss2", "webencodings", "colorama")
#: numpy's packages that `scipy.special`, imported by a report's cells, touches and never uses.
LAZY_IN_RENDER = ("numpy.f2py", "numpy.testing", "numpy.polynomial", "numpy.ctypeslib")

#: Entry-point groups papermill scans at import for plugins a report never uses.
PAPERMILL_PLUGIN_GROUPS = ("papermill.io", "papermill.engine")


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


class _LazyFinder(importlib.abc.MetaPathFinder):
    """Finds `names` with the other finders and hands them out with a LazyLoader."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if name not in self.names:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = importlib.util.LazyLoader(spec.loader)
                return spec
            if spec is not None:
                return None  # no loader LazyLoader can wrap: imported as usual
        return None


@contextmanager
def lazily(*names: str) -> Iterator[None]:
    """Inside: importing one of `names` (not imported yet) gives a module that runs on first use."""
    finder = _LazyFinder([n for n in names if n not in sys.modules])
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


@contextmanager
def without_plugin_scan(*groups: str) -> Iterator[None]:
    """Inside: `entrypoints.get_group_all(group)` finds nothing for `groups`. After: it scans again."""
    try:
        import entrypoints  # papermill's plugin finder
    except ImportError:
        yield
        return
    scan = entrypoints.get_group_all

    def lean_scan(group: str, path: Any = None) -> Any:
        return [] if group in groups else scan(group, path)

    entrypoints.get_group_all = lean_scan
    try:
        yield
    finally:
        entrypoints.get_group_all = scan


def import_lean() -> None:
    """Import papermill (with nbformat and jsonschema) and nbconvert without `LEAN_SKIPPED`, `LAZY`
    lazily, once."""
    if "papermill" in sys.modules and "nbconvert" in sys.modules:
        return
    with without_modules(*LEAN_SKIPPED), lazily(*LAZY), without_plugin_scan(*PAPERMILL_PLUGIN_GROUPS):
        try:
            # heavy: loaded on first use
            import nbconvert  # noqa: F401
            import papermill  # noqa: F401
        except ImportError:
            return  # not installed: rendering says which extra to install


@contextmanager
def lean_render() -> Iterator[None]:
    """Inside (one report's render): `LAZY_IN_RENDER` modules, imported by a cell, run on first use."""
    with lazily(*LAZY_IN_RENDER):
        yield
