"""A small least-recently-used cache for rendered templates.

``LRUCache(capacity, on_evict=None)`` keeps at most ``capacity`` entries.
Reading an entry with ``get`` or writing it with ``put`` (new key or
update) makes it the most recently used. ``peek`` and ``in`` do not change
the order. When a new key would exceed the capacity, the least recently
used entry is evicted and ``on_evict(key, value)`` is called for it.
Updating a key that is already cached never evicts anything. ``resize``
shrinks or grows the capacity, evicting least recently used entries first.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

_MISSING = object()


class LRUCache:
    def __init__(
        self, capacity: int, on_evict: Callable[[Hashable, Any], None] | None = None
    ):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._on_evict = on_evict
        self._data: OrderedDict[Hashable, Any] = OrderedDict()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def keys(self) -> list[Hashable]:
        """Keys from least to most recently used."""
        return list(self._data)

    def get(self, key: Hashable, default: Any = None) -> Any:
        value = self._data.get(key, _MISSING)
        if value is _MISSING:
            return default
        self._data.move_to_end(key)
        return value

    def peek(self, key: Hashable, default: Any = None) -> Any:
        return self._data.get(key, default)

    def put(self, key: Hashable, value: Any) -> None:
        if len(self._data) >= self.capacity:
            self._evict_one()
        self._data[key] = value
        self._data.move_to_end(key)

    def resize(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        while len(self._data) > self.capacity:
            key, value = self._data.popitem()
            if self._on_evict is not None:
                self._on_evict(key, value)

    def _evict_one(self) -> None:
        key, value = self._data.popitem(last=False)
        if self._on_evict is not None:
            self._on_evict(key, value)
