"""Values under keys that name a secret are masked whatever their shape; ordinary fields are not.

The sink audit (`test_redaction_audit.py`) seeds the same kind of values into a run and searches
every sink; here each key, each container and each look-alike, one case at a time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import aeh
from aeh.store import Redactor
from aeh.store._secret_keys import is_secret_key

R = Redactor()
SECRET = "[REDACTED:secret]"
#: No shape to find: only the key says what it is.
VALUE = "Tq3Wm8pLxRvKdNyBzQcHfGj"

SECRET_KEYS = ["Authorization", "Proxy-Authorization", "X-Api-Key", "api_key", "apikey", "API-KEY", "password",
               "passwd", "Password", "secret", "client_secret", "clientSecret", "access_token", "refresh_token",
               "private_key", "Cookie", "Set-Cookie", "token", "db_password", "OPENAI_API_KEY", "x_auth_token"]
ORDINARY_KEYS = ["tokens_in", "tokens_out", "token_count", "max_tokens", "password_policy", "secret_count",
                 "gen_ai.usage.input_tokens", "input_tokens", "authorization_url", "cookie_policy", "api_key_id",
                 "secrets", "tokenizer", "passing", "key", "value", "name"]


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_a_secret_named_key_is_masked_in_every_container(key: str) -> None:
    assert R.redact({key: VALUE}) == {key: SECRET}
    assert R.redact_plain({"a": {"b": [{key: VALUE}]}}) == {"a": {"b": [{key: SECRET}]}}
    assert R.redact({key: 123456}) == {key: SECRET}  # a number leaks as well as text
    assert R.redact([[key, VALUE]]) == [[key, SECRET]]  # a header list
    assert R.redact_plain({"headers": [(key, VALUE)]}) == {"headers": [[key, SECRET]]}
    assert R.redact([{"name": key, "value": VALUE}]) == [{"name": key, "value": SECRET}]
    text = R.redact_text(json.dumps({"body": {key: VALUE}}))
    assert VALUE not in text and f'"{key}": "[REDACTED:' in text  # a shape's marker may come first
    nested = R.redact_text(json.dumps({"output": json.dumps({key: VALUE, "n": 1})}))
    inner = json.loads(json.loads(nested)["output"])
    assert VALUE not in nested and inner["n"] == 1 and inner[key].startswith("[REDACTED:")
    assert VALUE not in R.dumps({"x": [{key: {"deeper": VALUE}}]})


@pytest.mark.parametrize("key", ORDINARY_KEYS)
def test_ordinary_fields_keep_their_values(key: str) -> None:
    assert not is_secret_key(key)
    assert R.redact({key: VALUE}) == {key: VALUE}
    assert R.redact_text(json.dumps({key: VALUE, "n": 5})) == json.dumps({key: VALUE, "n": 5})
    assert R.redact([[key, VALUE]]) == [[key, VALUE]]


def test_what_says_nothing_stays_and_a_shape_keeps_its_marker() -> None:
    assert R.redact({"password": "", "secret": None, "token": True}) == {"password": "", "secret": None, "token": True}
    # A shape found first keeps its more telling marker.
    assert R.redact({"Authorization": "Bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"}) == {
        "Authorization": "Bearer [REDACTED:api_key]"}
    assert R.redact_text("postgres://svc:hunter2hunter2@db.internal/app") == \
        "postgres://svc:[REDACTED:password]@db.internal/app"  # URL userinfo


def test_with_redaction_off_the_values_stay() -> None:
    assert Redactor(enabled=False).redact({"password": VALUE}) == {"password": VALUE}


@pytest.mark.parametrize("token", [
    "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",  # canonical: 34
    "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhX",  # one longer
    "api_org_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhX",
    "npm_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhIj",  # canonical: 36
    "npm_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGhIjX",  # one longer
    "AIza" + "SyD4x9Q2mN7pL1kJ8hG5fD3sA6zX0cV9bN2x",  # one longer than Google's 35
])
def test_vendor_tokens_a_character_off_their_length_are_caught(token: str) -> None:
    out = R.redact_text(f"tok {token} end")
    assert token not in out and "[REDACTED:api_key]" in out


def _keys(obj: Any, found: set[str]) -> set[str]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            found.add(str(k))
            _keys(v, found)
    elif isinstance(obj, list | tuple):
        for v in obj:
            _keys(v, found)
    elif isinstance(obj, str) and obj[:1] in "{[":
        try:
            _keys(json.loads(obj), found)
        except ValueError:
            pass
    return found


def test_no_false_positive_on_the_stored_attributes_of_a_core_run(tmp_path: Path) -> None:
    repo = Path(__file__).resolve().parents[2]
    table = aeh.run(str(repo / "suites" / "core"), adapter="mock", model="mock-strong", attempts=1, seed=1,
                    db=tmp_path / "runs.db", progress=False)
    spans = aeh.spans(table.run_id, db=tmp_path / "runs.db")
    keys: set[str] = set()
    for attributes in aeh.span_attributes(spans):
        _keys(attributes, keys)
    assert len(keys) > 20, "the walk found no attributes"
    assert sorted(k for k in keys if is_secret_key(k)) == []
    assert not any(SECRET in json.dumps(a) for a in aeh.span_attributes(spans))
