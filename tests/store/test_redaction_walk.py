"""The store's one-pass redaction of JSON payloads gives exactly what the JSON round trip gave:
odd values become their JSON form, keys as `json.dumps` writes them, and every secret is redacted."""

from __future__ import annotations

import enum
import json
import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from aeh.store import Redactor
from aeh.store._redact import json_default, plain
from aeh.store._rows import to_json

KEY = "sk-proj-Abc123Def456Ghi789Jkl012Mno"
CARD_NUMBER = 4111111111111111


class Colour(enum.StrEnum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Note(BaseModel):
    text: str
    tags: set[str] = set()


class Odd:
    def __str__(self) -> str:
        return f"odd object holding {KEY}"


PAYLOADS: list[Any] = [
    {"args": {"path": "notes.txt", "text": f"key {KEY} and mail jane.doe@example.org"}, "result": 12},
    {"card_number": CARD_NUMBER, "nested": {"card": str(CARD_NUMBER), "amount": 12.5}},
    {1: "int key", 2.5: "float key", None: "null key", "s": ("tuple", 1)},
    {True: "bool key", "x": 1},  # apart from 1: True and 1 are the same dict key
    {"enum": Colour.RED, "level": Level.HIGH, "model": Note(text=f"token {KEY}", tags={"b", "a"})},
    {"set": {3, 1, 2}, "frozen": frozenset({"x"}), "path": Path("a/b"), "odd": Odd()},
    {"nan": math.nan, "inf": math.inf, "neg": -0.0, "big": 10**30, "flag": False, "none": None},
    [KEY, {"Authorization": "Bearer abcdefghijklmnopqrstuvwxyz012345"}, "plain text"],
    {f"user {KEY}": "a secret in a key", "user [REDACTED:api_key]": "a key already like it"},
    "postgres://admin:hunter2secret@db.internal:5432/app",
]


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
@pytest.mark.parametrize("secrets", [(), ("hunter2secret", "a secret")])
def test_one_pass_equals_the_round_trip(payload: Any, secrets: tuple[str, ...]) -> None:
    redactor = Redactor(secrets)
    expected = Redactor(secrets).redact(plain(payload))
    got = redactor.redact_plain(payload)
    assert json.dumps(got, sort_keys=False) == json.dumps(expected, sort_keys=False)
    # And the stored text is that value's JSON.
    stored = to_json(payload, redactor)
    assert json.loads(stored, parse_constant=lambda c: c) == json.loads(
        json.dumps(expected, ensure_ascii=False), parse_constant=lambda c: c)
    assert KEY not in stored and "hunter2secret" not in stored
    assert str(CARD_NUMBER) not in stored


def test_cached_redactions_stay_correct_when_the_cache_is_full() -> None:
    redactor = Redactor()
    for i in range(10_000):  # past the text cache's size: it is cleared and refilled
        assert redactor.redact_plain({"v": f"value {i}"}) == {"v": f"value {i}"}
    assert redactor.redact_plain({"v": f"key {KEY}"}) == {"v": "key [REDACTED:api_key]"}
    assert redactor.redact_plain({"v": f"key {KEY}"}) == {"v": "key [REDACTED:api_key]"}


def test_a_key_that_json_cannot_write_is_refused_as_before() -> None:
    with pytest.raises(TypeError, match="keys must be"):
        json.dumps({(1, 2): "x"}, default=json_default)
    with pytest.raises(TypeError, match="keys must be"):
        Redactor().redact_plain({(1, 2): "x"})


def test_redaction_off_writes_the_payload_unchanged() -> None:
    payload = {"k": KEY, "n": Colour.RED}
    assert json.loads(to_json(payload, Redactor(enabled=False))) == {"k": KEY, "n": "red"}
