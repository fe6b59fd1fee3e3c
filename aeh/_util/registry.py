"""One registry type for every extension point: suites, graders, invariants, adapters, importers,
commands and trajectory scorers.

The shape follows papermill's engine registry: a registry object per extension point, its
built-ins listed in one table where the registry is defined (name → "module:object", imported
on first use, so listing names costs no import), third-party ones from an entry-point group
loaded on first use (and re-scanned, so a plugin installed after start-up is found too).

    adapters: Registry[AdapterFactory] = Registry("adapter", group="aeh.adapters",
                                                  builtins={"mock": "aeh.adapters._mock:MockAdapter"})
    adapters.get("mock")                                    # imports aeh.adapters._mock
    adapters.get("my_agent")                                # loads `aeh.adapters` entry points

An entry point names either the object itself (registered under the entry point's name) or a
module whose import registers its objects through a decorator (`@grader`, `@invariant`): then
those registrations are credited to the entry point's distribution.

Two different objects under one name is an error naming both sources, never a silent override.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import EntryPoint, distributions
from typing import Any, Generic, TypeVar

from aeh.errors import ConfigError

__all__ = ["BUILTIN", "Registry", "RegistryError"]

T = TypeVar("T")

#: The source recorded for objects aeh itself registers.
BUILTIN = "builtin"


class RegistryError(ConfigError):
    """Two plugins (or a plugin and a built-in) claim the same name, or a plugin fails to load."""


def _source(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    name = getattr(dist, "name", None) or "unknown distribution"
    return f"entry point {ep.group}:{ep.name} from {name}"


def load_object(target: str) -> Any:
    """The object a "package.module:attribute" string names, importing its module."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute) if attribute else importlib.import_module(module)


_SITE_DIRS = ("site-packages", "dist-packages")


def _where_distributions_live(found: list[str]) -> tuple[str, ...]:
    """The directories to watch: those a scan found distributions in, and every site directory."""
    sites = [e for e in sys.path if os.path.basename(e.rstrip("/\\")) in _SITE_DIRS]
    return tuple(sorted({*found, *sites}))


def _path_signature(watched: tuple[str, ...]) -> tuple[object, ...]:
    """sys.path itself, and when each watched directory last changed: installing or removing a
    package (a new or deleted .dist-info / .pth) changes its directory's mtime. Directories that
    hold no distributions (the working directory, where runs.db and temp files come and go) are
    not watched, so they cannot cause a rescan."""
    out: list[object] = [tuple(sys.path)]
    for entry in watched:
        try:
            out.append(os.stat(entry).st_mtime_ns)
        except OSError:
            out.append(None)
    return tuple(out)


class _Scan:
    """The last metadata scan: entry points by group, and what to watch for a change."""

    def __init__(self) -> None:
        by_group: dict[str, list[EntryPoint]] = {}
        found: list[str] = []
        for ep, home in _entry_points_with_homes():
            by_group.setdefault(ep.group, []).append(ep)
            found.append(home)
        self.by_group = {g: sorted(eps, key=lambda e: e.name) for g, eps in by_group.items()}
        self.watched = _where_distributions_live(found)
        self.signature = _path_signature(self.watched)


def _entry_points_with_homes() -> Iterator[tuple[EntryPoint, str]]:
    seen: set[str] = set()
    for dist in distributions():
        # The name from the .dist-info folder, not METADATA: parsing 200 METADATA files costs
        # ~0.15 s, the folder names ~0.01 s (METADATA only where the folder does not say).
        raw = getattr(dist, "_normalized_name", None) or dist.metadata["Name"] or ""
        name = re.sub(r"[-_.]+", "-", raw).lower()
        if name in seen:
            continue
        seen.add(name)
        home = str(getattr(dist, "_path", "") and os.path.dirname(str(dist._path)))  # type: ignore[attr-defined]
        for ep in dist.entry_points:
            yield ep, home


_scan: _Scan | None = None

RECHECK_S = 1.0
"""How often the watched directories are stat-ed for newly installed packages."""
_checked_at: float | None = None


def group_entry_points(group: str, *, fresh: bool = False, recheck: bool = False) -> list[EntryPoint]:
    """The entry points of `group`, sorted by name; the metadata scan (tens of ms) is redone only
    when sys.path or a directory holding distributions has changed (looked at most every
    RECHECK_S, or now with `recheck`), so hot paths may call this freely. `fresh` always rescans."""
    global _scan, _checked_at
    now = time.monotonic()
    if _scan is None or fresh:
        _scan, _checked_at = _Scan(), now
    elif recheck or _checked_at is None or now - _checked_at >= RECHECK_S:
        _checked_at = now
        if _path_signature(_scan.watched) != _scan.signature:
            _scan = _Scan()
    return list(_scan.by_group.get(group, []))


class Registry(Generic[T]):
    """Named objects of one kind, with where each came from."""

    def __init__(self, kind: str, group: str | None = None, *, builtins: Mapping[str, str] | None = None,
                 adapt: Callable[[Any], T] | None = None) -> None:
        self.kind = kind
        """What the objects are, for messages ("adapter", "grader kind" …)."""
        self.group = group
        """The entry-point group third-party packages register under, if any."""
        self._items: dict[str, T] = {}
        self._sources: dict[str, str] = {}
        self._seen: set[str] = set()
        self._loading: str | None = None
        self._lazy: dict[str, str] = dict(builtins or {})
        self._resolving = threading.RLock()
        self._adapt = adapt

    def _resolve(self, name: object) -> None:
        # A built-in listed by "module:object" is imported the first time it is asked for. Under
        # a lock, and taken off the lazy table only once loaded: two threads asking at once (two
        # `aeh` commands in one process) must both find it.
        if not isinstance(name, str) or name not in self._lazy:
            return
        with self._resolving:
            target = self._lazy.get(name)
            if target is None:
                return
            obj = load_object(target)
            self._items[name] = self._adapt(obj) if self._adapt is not None else obj
            self._sources[name] = BUILTIN
            del self._lazy[name]

    def register(self, name: str, obj: T, *, source: str | None = None) -> T:
        """Add `obj` as `name`; returns `obj` so it can be used under a decorator.

        Registering the same object again is a no-op (a module imported twice, or a built-in
        that is also published as an entry point); a different object is a RegistryError.
        """
        source = source or self._loading or BUILTIN
        self._resolve(name)
        known = self._items.get(name)
        if known is not None and known is not obj and not _same_definition(known, obj):
            raise RegistryError(
                f"{self.kind} {name!r} is registered twice: by {self._sources[name]} and by {source} — "
                f"rename one of them or uninstall one of the packages"
            )
        if known is None:
            self._items[name] = obj
            self._sources[name] = source
        return obj

    def load_entry_points(self, *, recheck: bool = False) -> None:
        """Load every entry point of the group not loaded yet (plugins installed later too;
        `recheck` looks for them now rather than at the next periodic check)."""
        if self.group is None:
            return
        for ep in group_entry_points(self.group, recheck=recheck):
            key = f"{ep.name}={ep.value}"
            if key in self._seen:
                continue
            self._seen.add(key)
            with self._crediting(_source(ep)):
                try:
                    obj = ep.load()
                except Exception as exc:  # noqa: BLE001 — a broken plugin is a clear error, not a crash
                    if key not in {f"{e.name}={e.value}" for e in group_entry_points(self.group, fresh=True)}:
                        continue  # uninstalled since the last look: not a plugin any more
                    raise RegistryError(f"{self.kind} plugin {ep.name!r} ({ep.value}) failed to load: "
                                        f"{type(exc).__name__}: {exc} — fix or reinstall it") from exc
                if not isinstance(obj, types.ModuleType):  # a module registers its own objects
                    self.register(ep.name, obj)

    @contextmanager
    def _crediting(self, source: str) -> Iterator[None]:
        previous, self._loading = self._loading, source
        try:
            yield
        finally:
            self._loading = previous

    def unregister(self, name: str) -> None:
        """Forget `name` (a plugin uninstalled while running, in tests); its entry point may load again."""
        self._items.pop(name, None)
        self._sources.pop(name, None)
        self._lazy.pop(name, None)
        self._seen = {key for key in self._seen if not key.startswith(f"{name}=")}

    def get(self, name: str) -> T:
        """The object registered as `name`; KeyError when no built-in or plugin has it."""
        self._resolve(name)
        self._look_for(name)
        return self._items[name]

    def __contains__(self, name: object) -> bool:
        if name in self._lazy:
            return True
        self._look_for(name)
        return name in self._items

    def _look_for(self, name: object) -> None:
        # A name not found yet may belong to a package installed (or put on sys.path) a moment
        # ago: a miss looks again at once instead of waiting for the periodic check.
        if name not in self._items:
            self.load_entry_points()
        if name not in self._items:
            self.load_entry_points(recheck=True)

    def names(self) -> list[str]:
        """Every registered name, sorted, after loading the entry points."""
        self.load_entry_points()
        return sorted({*self._items, *self._lazy})

    def describe(self) -> dict[str, str]:
        """Name → where it came from (`builtin` or the entry point and its distribution)."""
        return {name: self._sources.get(name, BUILTIN) for name in self.names()}

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, group={self.group!r}, {len(self._items) + len(self._lazy)} registered)"


def _same_definition(a: object, b: object) -> bool:
    # importlib.reload (notebooks) re-creates a function: same module and name is the same thing.
    key = ("__module__", "__qualname__")
    a, b = getattr(a, "fn", a), getattr(b, "fn", b)  # a grader kind wraps its function
    return all(getattr(a, k, None) is not None and getattr(a, k, None) == getattr(b, k, None) for k in key)
