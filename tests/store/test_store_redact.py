"""The Redactor: what it replaces, and what it must leave alone."""

from __future__ import annotations

import pytest

from aeh.store import Redactor, luhn_valid

R = Redactor(secrets=["hunter2", "hunter2-long-form"])


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("mail bob.smith+x@mail.example.co.uk now", "mail [REDACTED:email] now"),
        ("card 4111 1111 1111 1111.", "card [REDACTED:card]."),
        ("4111-1111-1111-1111", "[REDACTED:card]"),
        ("4111111111111111", "[REDACTED:card]"),
        ("amex 3782 822463 10005", "amex [REDACTED:card]"),
        ("call 555-1234 4111 1111 1111 1111", "call 555-1234 [REDACTED:card]"),
        ("pw hunter2!", "pw [REDACTED:secret]!"),
        ("pw hunter2-long-form.", "pw [REDACTED:secret]."),  # longest secret wins
        ("key sk-abcdefghijklmnopqrstuvwx12", "key [REDACTED:api_key]"),
        ("sk-proj-abcdefghijklmnopqrstuvwx12", "[REDACTED:api_key]"),
        ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "[REDACTED:api_key]"),
        ("id=AKIAIOSFODNN7EXAMPLE;", "id=[REDACTED:api_key];"),
        ("ghp_" + "a1" * 18, "[REDACTED:api_key]"),
        ("xoxb-1234567890-abcdef", "[REDACTED:api_key]"),
        ("AIza" + "B" * 35, "[REDACTED:api_key]"),
        ("Authorization: Bearer eyJhbGciOiJI.UzI1NiJ9x.abc", "Authorization: Bearer [REDACTED:api_key]"),
    ],
)
def test_replaces(text: str, want: str) -> None:
    assert R.redact_text(text) == want


@pytest.mark.parametrize(
    "text",
    [
        "391",
        "order 4111111111111112 shipped",  # 16 digits, not Luhn-valid
        "ts 1732900000000",  # a millisecond timestamp
        "2025-01-01 12:00",
        "+1 555-123-4567",
        "sk-short",
        "ask-me-anything",
        "the bearer of bad news",
        "x@y",
        "",
    ],
)
def test_leaves_ordinary_text(text: str) -> None:
    assert R.redact_text(text) == text


def test_luhn() -> None:
    assert luhn_valid("4111111111111111") and luhn_valid("79927398713")
    assert not luhn_valid("4111111111111112")


def test_redact_walks_values_not_keys() -> None:
    obj = {
        "bob@example.com": "to bob@example.com",
        "nested": [("hunter2", 391), {"n": 1.5, "ok": True, "none": None}],
        "card_as_int": 4111111111111111,
        "plain_int": 4111111111111112,
    }
    out = R.redact(obj)
    assert out == {
        "bob@example.com": "to [REDACTED:email]",
        "nested": [("[REDACTED:secret]", 391), {"n": 1.5, "ok": True, "none": None}],
        "card_as_int": "[REDACTED:card]",
        "plain_int": 4111111111111112,
    }
    assert obj["bob@example.com"] == "to bob@example.com"  # input not mutated


def test_disabled_is_identity() -> None:
    r = Redactor(secrets=["hunter2"], enabled=False)
    text = "bob@example.com 4111 1111 1111 1111 hunter2 sk-abcdefghijklmnopqrstuvwx12"
    assert r.redact_text(text) == text
    obj = {"a": [text]}
    assert r.redact(obj) is obj


def test_empty_secret_is_ignored() -> None:
    assert Redactor(secrets=["", "abc"]).redact_text("xabcx") == "x[REDACTED:secret]x"
