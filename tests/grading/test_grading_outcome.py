"""Tier-0 outcome graders: pass, fail, and configs that fail validation with a clear message."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from aeh.grading._registry import GradeContext, default_graders
from aeh.grading.outcome import extract_last_number
from aeh.models import GraderResult, GraderSpec, Task, ToolCall, TraceView


def spec(kind: str, **options) -> GraderSpec:
    return GraderSpec(kind=kind, **options)


async def grade(s: GraderSpec, output: str | None = None, *, status: str = "answered",
                calls: list[ToolCall] | None = None) -> GraderResult:
    task = Task(id="t", prompt="p", graders=[s])
    trace = TraceView(task_id="t", final_output=output, status=status, tool_calls=calls or [])
    result = await default_graders.grade(s, GradeContext(task=task, trace=trace, workspace=Path(".")))
    assert result.tier == 0 and result.kind == s.kind
    return result


def invalid(kind: str, **options) -> str:
    with pytest.raises(pydantic.ValidationError) as info:
        default_graders.validate(spec(kind, **options))
    return str(info.value)


def ok(name: str, error: str | None = None) -> ToolCall:
    return ToolCall(name=name, error_kind=error)


async def test_exact():
    assert (await grade(spec("exact", expected="Paris"), "  paris\n")).passed
    strict = spec("exact", expected="Paris", case_sensitive=True, strip=False)
    assert not (await grade(strict, "paris")).passed
    assert not (await grade(strict, " Paris")).passed
    r = await grade(spec("exact", expected="Paris"), "Paris, France")
    assert not r.passed and r.evidence["output"] == "Paris, France" and r.evidence["expected"] == "Paris"
    assert "expected" in invalid("exact") and "Field required" in invalid("exact")


async def test_contains():
    assert (await grade(spec("contains", substring="fox"), "The quick FOX")).passed
    assert (await grade(spec("contains", expected="fox"), "a fox")).passed  # `expected` alias
    r = await grade(spec("contains", all_of=["a", "zebra"], any_of=["cat", "fox"]), "a fox")
    assert not r.passed and r.evidence["missing"] == ["zebra"] and r.evidence["found_any"] == ["fox"]
    r = await grade(spec("contains", any_of=["cat", "dog"]), "a fox")
    assert not r.passed and r.evidence["found_any"] == []
    assert not (await grade(spec("contains", substring="Fox", case_sensitive=True), "a fox")).passed
    assert "give `substring`, `all_of` or `any_of`" in invalid("contains")
    assert "Extra inputs are not permitted" in invalid("contains", substring="x", sub="y")


@pytest.mark.parametrize("text, number", [
    ("The answer is 42.", 42.0),
    ("Total: $1,234.50 after tax", 1234.5),
    ("first 3, then -7", -7.0),
    ("you owe -$5", -5.0),
    ("balance $-1,000", -1000.0),
    ("5-3 is 2", 2.0),
    ("range 3-4", 4.0),
    ("1.5e3 units", 1500.0),
    (".5 of it", 0.5),
    ("no digits here", None),
    ("", None),
    (None, None),
])
def test_extract_last_number(text, number):
    assert extract_last_number(text) == number


async def test_numeric():
    r = await grade(spec("numeric", expected=16.5833, abs_tol=0.01), "About 16.58 seconds")
    assert r.passed and r.evidence["extracted"] == 16.58
    r = await grade(spec("numeric", expected=126), "I got 129 boxes")
    assert not r.passed and r.evidence["extracted"] == 129 and r.evidence["difference"] == 3
    assert (await grade(spec("numeric", expected=1000, rel_tol=0.01), "$1,005")).passed
    r = await grade(spec("numeric", expected=1), "no idea")
    assert not r.passed and r.evidence["extracted"] is None
    assert "greater than or equal to 0" in invalid("numeric", expected=1, abs_tol=-1)
    assert "valid number" in invalid("numeric", expected="one")


async def test_regex():
    assert (await grade(spec("regex", pattern=r"\bID-\d{4}\b"), "your id is ID-0042.")).passed
    r = await grade(spec("regex", pattern=r"id-\d+", ignore_case=True), "ID-7")
    assert r.passed and r.evidence["match"] == "ID-7"
    assert not (await grade(spec("regex", pattern=r"\d+", fullmatch=True), "42 apples")).passed
    assert (await grade(spec("regex", pattern=r"\d+", fullmatch=True), " 42\n")).passed
    assert "pattern does not compile" in invalid("regex", pattern="(unclosed")


async def test_tool_sequence():
    calls = [ok("search"), ok("fetch", "timeout"), ok("fetch"), ok("log"), ok("write")]
    r = await grade(spec("tool_sequence", required=["search", "fetch", "write"]), "x", calls=calls)
    assert r.passed
    assert r.evidence["calls"] == ["search", "fetch (timeout)", "fetch", "log", "write"]
    r = await grade(spec("tool_sequence", required=["write", "search"]), "x", calls=calls)
    assert not r.passed and r.evidence["missing_from"] == ["search"]
    # a failed call does not count as doing the step
    r = await grade(spec("tool_sequence", required=["fetch"]), "x", calls=[ok("fetch", "500")])
    assert not r.passed
    r = await grade(spec("tool_sequence", forbidden=["delete"]), "x", calls=[ok("delete", "invalid_args")])
    assert not r.passed and r.evidence["forbidden_called"] == ["delete"]
    assert "give `required` and/or `forbidden`" in invalid("tool_sequence")


async def test_declined():
    assert (await grade(spec("declined"), "I can't do that", status="declined")).passed
    r = await grade(spec("declined"), "Here is the token", status="answered")
    assert not r.passed and r.evidence["status"] == "answered"
    r = await grade(spec("declined", forbid_tools=["read_file"]), None, status="declined",
                    calls=[ok("read_file")])
    assert not r.passed and r.evidence["forbidden_called"] == ["read_file"]
    assert "valid list" in invalid("declined", forbid_tools="read_file")


@pytest.mark.parametrize("s", [
    spec("exact", expected="x"), spec("contains", substring="x"), spec("numeric", expected=1),
    spec("regex", pattern="x"),
])
async def test_no_output_fails_with_evidence_instead_of_crashing(s):
    r = await grade(s, None)
    assert r.passed is False and r.evidence["output"] is None and "no final output" in r.evidence["reason"]


async def test_name_option_labels_the_result():
    assert (await grade(spec("exact", expected="x", name="strict_x"), "x")).name == "strict_x"
    assert (await grade(spec("exact", expected="x"), "x")).name == "exact"


async def test_a_spec_is_validated_once_and_again_when_its_options_change(monkeypatch: pytest.MonkeyPatch):
    s = spec("exact", expected="Paris")
    model = default_graders.config_model("exact")
    calls = []
    original = model.model_validate.__func__  # type: ignore[attr-defined]

    def counting(cls, obj, *args, **kwargs):
        calls.append(dict(obj))
        return original(cls, obj, *args, **kwargs)

    monkeypatch.setattr(model, "model_validate", classmethod(counting))
    for _ in range(3):
        assert (await grade(s, "Paris")).passed
    assert calls == [{"expected": "Paris"}]
    s.model_extra["expected"] = "Rome"  # an edited spec is parsed afresh
    assert not (await grade(s, "Paris")).passed
    assert (await grade(s, "Rome")).passed
    assert calls == [{"expected": "Paris"}, {"expected": "Rome"}]
