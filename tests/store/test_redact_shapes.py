"""Every credential shape, one test each: the raw value goes, its marker comes, the context stays.

The same table seeds the sink audit (`tests/store/test_redaction_audit.py`), so a shape added here is
searched for in the store, its WAL, the logs, the trace HTML, the review and OTel exports.
"""

from __future__ import annotations

import random

import pytest

from aeh.store import Redactor
from tests.store.shape_table import ADDED, SHAPES

R = Redactor()


@pytest.mark.parametrize("name", list(SHAPES))
def test_shape_is_redacted(name: str) -> None:
    text, raw, marker = SHAPES[name]
    out = Redactor(secrets=["swordfish-Quartz-42"]).redact_text(text)
    assert raw not in out
    assert marker in out, out


@pytest.mark.parametrize("name", ADDED)
def test_added_shape_is_redacted_inside_json_text(name: str) -> None:
    # Tool output often holds JSON as a string: quotes and escaped newlines around the value.
    import json

    text, raw, _ = SHAPES[name]
    out = R.redact_text(json.dumps({"output": f"line\n{text}\n"}))
    assert raw not in out and "[REDACTED:" in out


def test_header_names_in_json_keep_the_name() -> None:
    out = R.redact_text('{"x-api-key": "a1B2c3D4e5F6g7H8i9J0k1L2", "authorization": "Token 9f8e7d6c5b4a39281706f5e4d3"}')
    assert out == '{"x-api-key": "[REDACTED:api_key]", "authorization": "Token [REDACTED:api_key]"}'


@pytest.mark.parametrize("text", [
    "basic arithmetic is fine",
    "Basic usage notes",
    "a basic QUJDREVGR0g= value",  # base64, but no user:password inside
    "authorization: required for writes",
    "Authorization: see the docs",
    "the sig=2 parameter",
    "api_key = os.environ['OPENAI_API_KEY']",
    "AccountKey=short",
    "ask_test_me later",
    "task_live_report",
    "shelf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",  # hf_ glued into a longer word
    "SG.1 is a section number",
    "npm_config_cache=/tmp/npm",
    "glpat-short",
])
def test_look_alikes_are_kept(text: str) -> None:
    assert R.redact_text(text) == text


@pytest.mark.parametrize("kind", ["order", "amount", "timestamp", "float", "uuid", "sha"])
def test_number_corpora_have_no_false_positive(kind: str) -> None:
    rng = random.Random(25)
    texts = []
    for _ in range(2000):
        if kind == "order":
            texts.append(f"Your order number is {rng.randrange(10**15, 10**16)}.")
        elif kind == "amount":
            texts.append(f"total {rng.randrange(10**12, 10**16):,} EUR".replace(",", " "))
        elif kind == "timestamp":
            texts.append(f"ts {rng.randrange(10**12, 2 * 10**12)} sig=ok")
        elif kind == "float":
            texts.append(f"score {rng.random():.17f}, auth ok")
        elif kind == "uuid":
            texts.append(f"id {rng.getrandbits(128):032x}")
        else:
            texts.append(f"commit {rng.getrandbits(160):040x}")
    assert [t for t in texts if R.redact_text(t) != t] == []
