"""A payload that redaction would not change is written from itself, without a redacted copy: the
same text as the copying walk writes, for clean and dirty payloads alike."""

from __future__ import annotations

import math
from typing import Any

import pytest

from aeh.store import Redactor
from aeh.store._json import dumps
from aeh.store._packed import PACK_AT, pack, pack_bytes
from tests.store.test_redaction_walk import CARD_NUMBER, KEY, PAYLOADS, Colour, Level

CLEAN: list[Any] = [
    {"gen_ai.request.model": "mock-strong", "turn": 2, "cost_usd": 0.0000915, "priced": True, "error": None,
     "gen_ai.input.messages": [{"role": "user", "content": "What is 17 + 25?"}], "ids": ("a", 1, 2.5)},
    [1, -0.0, 1e300, 10**30, "plain", [], {}, None, False],
    "a string with no secret",
    {"é": "non-ASCII ✓", "nested": {"deeper": [{"x": "y"}]}},
]
DIRTY: list[Any] = [
    *PAYLOADS,
    {"ok": "x", "nan": math.nan},
    {"ok": "x", "inf": [1.0, -math.inf]},
    {"card_number": CARD_NUMBER},
    {"mail": "write to jane.doe@example.org"},
    {"k": Colour.RED},
    {"k": Level.HIGH},
    {1: "int key"},
    {"k": {"x": (KEY,)}},
]


@pytest.mark.parametrize("payload", CLEAN + DIRTY, ids=range(len(CLEAN + DIRTY)))
@pytest.mark.parametrize("secrets", [(), ("hunter2secret", "a secret")])
def test_the_text_is_the_redacted_copy_s_text(payload: Any, secrets: tuple[str, ...]) -> None:
    expected = dumps(Redactor(secrets).redact_plain(payload))  # the walk's copy, written
    redactor = Redactor(secrets)
    assert redactor.dumps(payload) == expected
    assert redactor.dumps_bytes(payload) == expected.encode()
    assert redactor.dumps(payload) == expected  # again, from the filled caches


@pytest.mark.parametrize("payload", CLEAN, ids=range(len(CLEAN)))
def test_a_clean_payload_takes_the_short_way(payload: Any) -> None:
    assert Redactor()._clean(payload)


@pytest.mark.parametrize("payload", DIRTY, ids=range(len(DIRTY)))
def test_anything_redaction_or_json_would_change_takes_the_walk(payload: Any) -> None:
    assert not Redactor(("hunter2secret",))._clean(payload)


def test_a_configured_secret_makes_a_payload_dirty() -> None:
    payload = {"assignee": "priya", "status": "open"}
    assert Redactor()._clean(payload)
    assert not Redactor(("priya",))._clean(payload)
    assert Redactor(("priya",)).dumps(payload) == '{"assignee":"[REDACTED:secret]","status":"open"}'


@pytest.mark.parametrize("text", ["", "short", "x" * (PACK_AT - 1), "ab" * PACK_AT, "é✓" * PACK_AT,
                                  "".join(chr(33 + (i * 7919) % 90) for i in range(2 * PACK_AT))])
def test_packing_the_bytes_stores_what_packing_the_text_stored(text: str) -> None:
    assert pack_bytes(text.encode()) == pack(text)


def test_a_payload_that_contains_itself_fails_as_the_walk_does() -> None:
    cyclic: list[Any] = ["x"]
    cyclic.append(cyclic)
    assert not Redactor()._clean(cyclic)  # no endless check
    with pytest.raises(RecursionError):
        Redactor().redact_plain(cyclic)
    with pytest.raises(RecursionError):
        Redactor().dumps(cyclic)
