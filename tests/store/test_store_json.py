"""The store's JSON text: orjson's where it means what `json.dumps` meant, the standard
encoder's where orjson would write something else."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
from typing import Any

import pytest

from aeh.store import Redactor
from aeh.store._json import dumps
from aeh.store._redact import json_default


@dataclasses.dataclass
class Point:
    x: int


PLAIN: list[Any] = [
    {"gen_ai.request.model": "m", "turn": 1, "cost_usd": 5.0549999999999995e-05, "priced": True, "x": None},
    {"messages": [{"role": "user", "content": "naïve café ☕ \"quoted\" \\ back\nslash"}], "n": [1, 2.5, -0.0]},
    [1e-05, 1e20, 0.1, 123456789012345680.0, 2**63 - 1, -(2**63)],
    ("tuple", {"nested": ("a", 1)}),
]


@pytest.mark.parametrize("payload", PLAIN, ids=range(len(PLAIN)))
def test_the_text_decodes_to_what_json_dumps_wrote(payload: Any) -> None:
    text = dumps(payload)
    assert json.loads(text) == json.loads(json.dumps(payload))


def test_non_finite_floats_keep_their_standard_spelling() -> None:
    text = dumps({"a": [1.0, {"b": math.nan}], "c": math.inf, "d": None})
    assert text == '{"a":[1.0,{"b":NaN}],"c":Infinity,"d":null}'  # orjson would have written null


def test_what_orjson_refuses_goes_to_the_standard_encoder() -> None:
    assert dumps({"big": 10**30}) == '{"big":1000000000000000000000000000000}'
    assert dumps({1: "int key", None: "null key"}) == '{"1":"int key","null":"null key"}'


def test_dataclasses_and_datetimes_are_written_as_their_text_as_before() -> None:
    when = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)
    payload = {"p": Point(1), "when": when}
    assert json.loads(dumps(payload, json_default)) == json.loads(json.dumps(payload, default=json_default))


@pytest.mark.parametrize("enabled", [True, False])
def test_the_redactor_writes_the_same_values_either_way(enabled: bool) -> None:
    payload = {"args": {"text": "mail jane.doe@example.org"}, "latency_s": 2.2e-05, "ok": True}
    text = Redactor(enabled=enabled).dumps(payload)
    expected = Redactor(enabled=enabled).redact_plain(payload)
    assert json.loads(text) == expected
    assert ("jane.doe@example.org" in text) is not enabled
