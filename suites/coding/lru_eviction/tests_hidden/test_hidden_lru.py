from lru import LRUCache


def _recording(capacity):
    evicted = []
    return LRUCache(capacity, on_evict=lambda k, v: evicted.append((k, v))), evicted


def test_updating_existing_key_when_full_does_not_evict():
    cache, evicted = _recording(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    assert evicted == []
    assert cache.keys() == ["b", "a"]
    assert cache.get("a") == 10 and cache.get("b") == 2


def test_update_refreshes_recency():
    cache, evicted = _recording(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 3)
    cache.put("c", 4)
    assert evicted == [("b", 2)]
    assert cache.keys() == ["a", "c"]


def test_capacity_one_update_keeps_value():
    cache, evicted = _recording(1)
    cache.put("only", 1)
    cache.put("only", 2)
    assert cache.get("only") == 2
    assert evicted == []


def test_peek_and_contains_do_not_refresh():
    cache, evicted = _recording(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.peek("a") == 1 and "a" in cache
    cache.put("c", 3)
    assert evicted == [("a", 1)]


def test_stored_none_is_a_hit():
    cache = LRUCache(2)
    cache.put("a", None)
    cache.put("b", 2)
    assert cache.get("a", "miss") is None
    cache.put("c", 3)
    assert cache.keys() == ["a", "c"]


def test_resize_evicts_least_recently_used_first():
    cache, evicted = _recording(4)
    for key in "abcd":
        cache.put(key, key.upper())
    cache.get("a")
    cache.resize(2)
    assert evicted == [("b", "B"), ("c", "C")]
    assert cache.keys() == ["d", "a"]


def test_resize_grow_then_fill():
    cache, evicted = _recording(1)
    cache.put("a", 1)
    cache.resize(3)
    cache.put("b", 2)
    cache.put("c", 3)
    assert evicted == [] and cache.keys() == ["a", "b", "c"]
