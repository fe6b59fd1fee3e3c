import pytest
from lru import LRUCache


def test_get_and_put():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    assert cache.get("missing", "dflt") == "dflt"
    assert len(cache) == 2


def test_evicts_least_recently_used():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.put("c", 3)
    assert "b" not in cache
    assert cache.keys() == ["a", "c"]


def test_on_evict_called_with_evicted_entry():
    evicted = []
    cache = LRUCache(1, on_evict=lambda k, v: evicted.append((k, v)))
    cache.put("a", 1)
    cache.put("b", 2)
    assert evicted == [("a", 1)]


def test_capacity_must_be_positive():
    with pytest.raises(ValueError):
        LRUCache(0)
