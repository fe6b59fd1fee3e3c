"""Fault injection: profiles, seeded injectors (uniform and burst), and the engine effects."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

import aeh
from aeh.api import run_sync
from aeh.engine.budget import BudgetTracker
from aeh.engine.context import GARBAGE_OUTPUT, AttemptContext
from aeh.engine.runplan import plan_run
from aeh.errors import ConfigError, ValidationError
from aeh.grading.classify import classify_failure
from aeh.models import FailureBucket, Task, ToolCall
from aeh.pricing import load_price_table
from aeh.tools._tools import ToolRegistry
from aeh.tools.faults import (
    FaultInjector,
    FaultProfile,
    burst_start_probability,
    configure_faults,
    load_fault_profile,
    resolve_fault_profile,
)
from aeh.trace import SpanRecorder

CORE_FAULTS = Path(__file__).resolve().parents[2] / "suites" / "core" / "faults.yaml"


def _sequence(profile: FaultProfile, seed: int, n: int, tool: str = "t") -> list[str | None]:
    inj = FaultInjector(profile, seed)
    return [inj.next_fault(tool) for _ in range(n)]


# --- profiles -------------------------------------------------------------------------------


def test_profile_from_rate_splits_evenly_over_kinds() -> None:
    p = FaultProfile(rate=0.3)
    assert p.kind_rates() == pytest.approx({"timeout": 0.1, "500": 0.1, "garbage": 0.1})
    assert FaultProfile(rate=0.2, kinds=["500"]).kind_rates() == {"500": 0.2}


def test_yaml_integer_500_key_is_the_500_kind(tmp_path: Path) -> None:
    f = tmp_path / "faults.yaml"
    f.write_text("mode: burst\nrates: {timeout: 0.1, 500: 0.2}\nburst_length: 3\n")
    p = load_fault_profile(f)
    assert p.kind_rates() == {"timeout": 0.1, "500": 0.2}
    assert p.name == "faults" and p.mode == "burst"


def test_shipped_core_profile_loads() -> None:
    p = load_fault_profile(CORE_FAULTS)
    assert p.mode == "burst" and p.total_rate == pytest.approx(0.2)
    assert "http_get" in (p.tools or [])


def test_bad_profile_lists_every_problem_with_file_field_and_fix(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("mode: bursty\nrates: {timeout: 0.7, 500: 0.6}\nburst_lenght: 3\n")
    with pytest.raises(ValidationError) as err:
        load_fault_profile(f)
    text = str(err.value)
    fields = {p.field for p in err.value.problems}
    assert {"mode", "rates", "burst_lenght"} <= fields
    assert "did you mean 'burst_length'" in text
    assert "sum must be at most 1" in text
    assert all(p.file.endswith("bad.yaml") for p in err.value.problems)
    assert all(p.fix for p in err.value.problems)


@pytest.mark.parametrize("data, message", [
    ({"rate": 0.1, "rates": {"500": 0.1}}, "not both"),
    ({"mode": "uniform"}, "give `rates"),
    ({"rates": {"404": 0.1}}, "rates"),
    ({"rates": {"500": 1.5}}, "[0, 1]"),
    ({"rate": 0.1, "kinds": []}, "at least one"),
    ({"rates": {"500": 0.1}, "kinds": ["500"]}, "`kinds` goes with `rate`"),
    ({"rate": 0.1, "burst_length": 0}, "burst_length"),
])
def test_invalid_profiles_are_refused(data: dict, message: str) -> None:
    with pytest.raises(ValidationError) as err:
        resolve_fault_profile(data)
    assert message in str(err.value)


def test_missing_profile_file_is_a_validation_error(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="not found"):
        load_fault_profile(tmp_path / "nope.yaml")


def test_fault_rate_override_keeps_kind_proportions() -> None:
    p = resolve_fault_profile({"rates": {"timeout": 0.05, "500": 0.15}}, fault_rate=0.4)
    assert p.kind_rates() == pytest.approx({"timeout": 0.1, "500": 0.3})
    assert resolve_fault_profile({"rate": 0.1, "kinds": ["garbage"]}, fault_rate=0.5).kind_rates() == {"garbage": 0.5}


def test_fault_rate_without_profile_is_uniform_over_all_kinds() -> None:
    _spec, options = plan_run(fault_rate=0.3)
    assert options.fault_profile["mode"] == "uniform"
    assert FaultProfile.model_validate(options.fault_profile).kind_rates() == pytest.approx(
        {"timeout": 0.1, "500": 0.1, "garbage": 0.1})
    json.dumps(options.fault_profile)  # recorded on the run: must be JSON
    assert isinstance(options.fault_factory(None, 1), FaultInjector)


def test_configure_faults_sets_factory_and_recorded_profile() -> None:
    class Opts:
        fault_factory = None
        fault_profile = None

    opts = Opts()
    configure_faults(opts, str(CORE_FAULTS), fault_rate=0.4, mode="uniform")
    assert opts.fault_profile["mode"] == "uniform"
    assert sum(opts.fault_profile["rates"].values()) == pytest.approx(0.4)
    # The recorded dict round-trips into the same profile (a replay can reuse it).
    assert FaultProfile.model_validate(opts.fault_profile).kind_rates() == FaultProfile.model_validate(
        opts.fault_profile).kind_rates()
    with pytest.raises(ConfigError):
        configure_faults(opts, None, fault_rate=1.5)
    with pytest.raises(ConfigError):
        configure_faults(opts, {"rate": 0.1}, mode="sometimes")


# --- injectors --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["uniform", "burst"])
def test_same_seed_same_faults_different_seed_different_faults(mode: str) -> None:
    p = FaultProfile(mode=mode, rate=0.3, burst_length=3)
    assert _sequence(p, 42, 300) == _sequence(p, 42, 300)
    assert _sequence(p, 42, 300) != _sequence(p, 43, 300)


def test_same_run_seed_gives_same_faults_in_the_engine(tmp_path: Path) -> None:
    def faults(seed: int, name: str) -> list:
        db = tmp_path / f"{name}.db"
        table = aeh.run("toy_math", "mock", attempts=3, seed=seed, db=db,
                        fault_profile={"rate": 0.5, "kinds": ["500", "garbage"]})
        frame = aeh.attempts(table.run_id, db).sort_values(["task_id", "attempt"])
        return list(zip(frame["task_id"], frame["attempt"], frame["n_injected_faults"], frame["success"],
                        strict=True))

    assert faults(7, "a") == faults(7, "b")


def test_uniform_rate_and_kind_mix_converge() -> None:
    p = FaultProfile(rates={"timeout": 0.05, "500": 0.15, "garbage": 0.1})
    seq = _sequence(p, 1, 40_000)
    assert sum(f is not None for f in seq) / len(seq) == pytest.approx(0.3, abs=0.01)
    assert seq.count("500") / len(seq) == pytest.approx(0.15, abs=0.01)


def _runs(seq: list[str | None]) -> list[tuple[int, int]]:
    """(start, length) of each maximal run of failed calls."""
    out, start = [], None
    for i, f in enumerate([*seq, None]):
        if f is not None and start is None:
            start = i
        elif f is None and start is not None:
            out.append((start, i - start))
            start = None
    return out


@pytest.mark.parametrize("length", [1, 4, 7])
def test_burst_windows_are_contiguous_and_single_kind(length: int) -> None:
    p = FaultProfile(mode="burst", rate=0.3, burst_length=length)
    seq = _sequence(p, 5, 20_000)
    runs = _runs(seq)
    assert runs, "no faults at rate 0.3"
    interior = [(s, n) for s, n in runs if s > 0 and s + n < len(seq)]
    # Windows may abut, but every interior run is made of whole windows of `length` calls…
    assert all(n % length == 0 for _, n in interior)
    # …and each window fails with one kind (an outage has one symptom).
    for s, n in interior:
        for w in range(s, s + n, length):
            assert len(set(seq[w:w + length])) == 1
    # The long-run share of failed calls is the rate (burst_start_probability's formula).
    assert sum(f is not None for f in seq) / len(seq) == pytest.approx(0.3, abs=0.02)


def test_burst_is_clustered_where_uniform_is_not() -> None:
    burst = _runs(_sequence(FaultProfile(mode="burst", rate=0.2, burst_length=5), 3, 20_000))
    uniform = _runs(_sequence(FaultProfile(mode="uniform", rate=0.2), 3, 20_000))
    mean = lambda runs: sum(n for _, n in runs) / len(runs)  # noqa: E731
    assert mean(burst) >= 5 and mean(uniform) < 1.5


def test_burst_first_call_fails_with_the_rate_even_in_short_attempts() -> None:
    p = FaultProfile(mode="burst", rate=0.25, burst_length=6)
    first_three = [_sequence(p, seed, 3) for seed in range(6000)]
    for i in range(3):
        share = sum(s[i] is not None for s in first_three) / len(first_three)
        assert share == pytest.approx(0.25, abs=0.025)


def test_burst_start_probability_formula() -> None:
    assert burst_start_probability(0.0, 5) == 0.0
    assert burst_start_probability(1.0, 5) == 1.0
    assert burst_start_probability(0.3, 1) == pytest.approx(0.3)
    p, length = 0.3, 5
    q = burst_start_probability(p, length)
    assert length / (length + (1 - q) / q) == pytest.approx(p)


def test_only_targeted_tools_count() -> None:
    p = FaultProfile(mode="burst", rate=0.4, burst_length=3, tools=["a"])
    alone = _sequence(p, 9, 200, "a")
    inj = FaultInjector(p, 9)
    mixed = []
    rng = random.Random(0)
    while len(mixed) < 200:
        if rng.random() < 0.5:
            assert inj.next_fault("b") is None
        else:
            mixed.append(inj.next_fault("a"))
    assert mixed == alone
    assert {t for t, _ in inj.history} == {"a"}


def test_rate_zero_never_fails() -> None:
    assert set(_sequence(FaultProfile(mode="burst", rate=0.0), 1, 1000)) == {None}


# --- effects in the engine ------------------------------------------------------------------


def _context(fault: str, timeout_s: float, tmp_path: Path) -> AttemptContext:
    registry = ToolRegistry()
    registry.register("lookup", lambda args, env: {"ok": True}, timeout_s=timeout_s)
    task = Task(id="t", prompt="p", tools=["lookup"], graders=[{"kind": "exact", "expected": "x"}])
    profile = FaultProfile(rate=1.0, kinds=[fault])
    return AttemptContext(task=task, attempt=0, seed=1, workspace=tmp_path, registry=registry,
                          recorder=SpanRecorder("r", "t", 0), budget=BudgetTracker(task.budget),
                          prices=load_price_table(), faults=FaultInjector(profile, 1))


def test_injected_timeout_really_waits_for_the_tool_timeout(tmp_path: Path) -> None:
    ctx = _context("timeout", 0.25, tmp_path)
    start = time.monotonic()
    call = run_sync(ctx.call_tool("lookup", {}))
    assert time.monotonic() - start >= 0.24
    assert call.error_kind == "timeout" and call.injected_fault == "timeout" and call.latency_s >= 0.24
    assert call.result is None


def test_injected_garbage_is_really_malformed(tmp_path: Path) -> None:
    call = run_sync(_context("garbage", 1.0, tmp_path).call_tool("lookup", {}))
    assert call.error_kind == "garbage" and call.injected_fault == "garbage"
    assert call.result == GARBAGE_OUTPUT
    with pytest.raises(json.JSONDecodeError):
        json.loads(call.result)


def test_injected_500_is_a_server_error_and_recorded_as_a_faults_span(tmp_path: Path) -> None:
    ctx = _context("500", 1.0, tmp_path)
    call = run_sync(ctx.call_tool("lookup", {}))
    assert call.error_kind == "500" and call.injected_fault == "500" and "500" in (call.error or "")
    fault_spans = [s for s in ctx.recorder.spans if s.category == "faults"]
    assert len(fault_spans) == 1 and fault_spans[0].attributes["error_kind"] == "500"
    assert fault_spans[0].attributes["tool"] == "lookup"


def test_agent_mistakes_are_not_injected_faults(tmp_path: Path) -> None:
    ctx = _context("500", 1.0, tmp_path)
    bad = run_sync(ctx.call_tool("nope", {}))
    assert bad.error_kind == "unknown_tool" and bad.injected_fault is None
    assert ctx.faults.history == []  # a call that never reached the tool does not advance faults


@pytest.mark.parametrize("kind", ["timeout", "500", "garbage"])
def test_injected_faults_are_never_classified_as_malformed_calls(kind: str) -> None:
    calls = [ToolCall(name="lookup", error_kind=kind, injected_fault=kind),
             ToolCall(name="other", result=1)]
    bucket = classify_failure(success=False, status="answered", tool_calls=calls, final_output="x")
    assert bucket == FailureBucket.tool_error
    # Recovered (a later call of the same tool worked): still not the agent's malformed call.
    calls.append(ToolCall(name="lookup", result=1))
    bucket = classify_failure(success=False, status="answered", tool_calls=calls, final_output="x")
    assert bucket not in (FailureBucket.malformed_tool_call, FailureBucket.hallucinated_tool)


def test_engine_run_records_faults_on_calls_spans_and_run(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    careful = {k: 0.0 for k in ("p_decline", "p_give_up", "p_hallucinate", "p_bad_args", "p_loop")}
    table = aeh.run("toy_math", "mock", attempts=3, seed=1, db=db, adapter_options=careful,
                    fault_profile={"rate": 1.0, "kinds": ["500"]})
    run_id = table.run_id
    assert table.run.fault_profile["rates"] is None
    assert table.run.fault_profile["rate"] == 1.0
    assert (table["successes"] == 0).all()
    assert table["injected_faults"].sum() > 0
    attempts = aeh.attempts(run_id, db)
    # Every failure is the injected tool error, never the agent's malformed call.
    assert set(attempts["failure_bucket"]) == {"tool_error"}
    from aeh.store import Store

    with Store(db) as store:

        frame = store.attempts_frame(run_id)
    for calls in frame["tool_calls"].to_list():
        calls = json.loads(calls) if isinstance(calls, str) else calls
        for c in calls:
            assert c["injected_fault"] == "500" and c["error_kind"] == "500"
    spans = aeh.spans(run_id, db)
    assert (spans["category"] == "faults").sum() == table["injected_faults"].sum()
