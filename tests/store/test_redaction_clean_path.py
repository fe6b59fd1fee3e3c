"""The writer's in-place check (`Redactor._clean`) never lets a secret-named header through unmasked."""

import pytest

from aeh.store._redact import Redactor

VALUE = "Tq3Wm8xZ0pLr5Kv2"


@pytest.mark.parametrize("payload", [
    {"name": "Authorization", "value": VALUE},
    {"headers": [["X-Api-Key", VALUE]]},
    {"password": VALUE},
])
def test_secret_named_values_are_masked_on_the_fast_path(payload: object) -> None:
    redactor = Redactor()
    assert VALUE not in redactor.dumps(payload)
    assert VALUE.encode() not in redactor.dumps_bytes(payload)


def test_a_plain_payload_is_written_as_it_is() -> None:
    payload = {"name": "city", "value": "Paris", "pair": ["k", "v"]}
    assert Redactor().dumps(payload) == '{"name":"city","value":"Paris","pair":["k","v"]}'
