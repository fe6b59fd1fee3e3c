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


def test_long_text_repeated_across_spans_is_redacted_once_and_everywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    # A model call's input repeats the system prompt and earlier messages: 1,000+ characters each time.
    from aeh.models import Span

    redactor = Redactor()
    prompt = "You are a support agent. " * 40 + "Escalate to ops@example.com when stuck."
    spans = [Span(run_id="r", task_id="t", attempt=1, span_id=f"s{i}", name="model", category="model", start_ts=0.0,
                  attributes={"input": [{"role": "system", "content": prompt}, {"role": "user", "content": f"q{i}"}]})
             for i in range(6)]
    calls: list[int] = []
    real = Redactor.redact_text

    def counted(self: Redactor, s: str, *, card_context: bool = False) -> str:
        calls.append(len(s))
        return real(self, s, card_context=card_context)

    monkeypatch.setattr(Redactor, "redact_text", counted)
    redacted = [redactor.redact_span(s) for s in spans]
    assert all("ops@example.com" not in str(s.attributes) and "[REDACTED:email]" in str(s.attributes)
               for s in redacted)
    assert sum(1 for n in calls if n == len(prompt)) == 1  # the long prompt's regexes ran once


def test_the_long_text_memory_stays_within_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from aeh.store import _redact

    monkeypatch.setattr(_redact, "_LONG_TEXT_CACHE_CHARS", 10_000)
    redactor = Redactor()
    for i in range(50):
        assert redactor.redact_plain({"text": f"{i:04d} " + "x" * 995}) == {"text": f"{i:04d} " + "x" * 995}
        assert redactor._long_chars <= 10_000
        assert sum(map(len, redactor._long_texts)) == redactor._long_chars


def test_a_clean_span_or_model_is_returned_as_it_is_and_a_dirty_one_copied() -> None:
    from aeh.models import Span

    clean = Span(run_id="r", task_id="t", attempt=1, span_id="a", name="tool", category="tools", start_ts=0.0,
                 attributes={"args": {"q": "x"}})
    dirty = clean.model_copy(update={"attributes": {"args": {"password": VALUE}}})
    redactor = Redactor()
    assert redactor.redact_span(clean) is clean
    copied = redactor.redact_span(dirty)
    assert copied is not dirty and VALUE not in str(copied.attributes) and VALUE in str(dirty.attributes)
    assert redactor.redact_model(clean) is clean
    assert VALUE not in redactor.redact_model(dirty).model_dump_json()
