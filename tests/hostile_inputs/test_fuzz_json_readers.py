"""Fuzzing every JSON reader of a user's file: trajectory, OTLP, Terminal-Bench, τ-bench,
baseline and review labels. Whatever the bytes — generated JSON with odd values, NaN and
Infinity tokens, duplicate keys, deep nesting, cut documents, integers of 401 and 5,000 digits
(also as OTLP `intValue`s), floats past their range, lone surrogates, span ids used twice, spans
ending before they start, near-valid documents with fields of the wrong type, raw binary — each reader accepts the file or raises an `AehError` with a
message: never a RecursionError, TypeError, KeyError, ValueError or anything else. In the slow
lane (several hundred examples).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aeh.analysis._baseline import load_baseline
from aeh.errors import AehError
from aeh.importers._otel import load_otlp, otlp_to_trajectories
from aeh.importers._tau_bench import import_tau_bench
from aeh.importers._terminal_bench import import_terminal_bench
from aeh.store import Store, import_labels
from aeh.trajectory import load_trajectories

pytestmark = pytest.mark.slow

FUZZ = settings(max_examples=80, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False),
    st.text(max_size=12), st.sampled_from(["t1", "", "../../x", "0x" + "a" * 16, "b" * 16, "1", "soon", "\x00"]),
)
keys = st.one_of(st.sampled_from([
    "task_id", "final_output", "steps", "kind", "name", "args", "result", "status", "metadata", "trajectories",
    "resourceSpans", "scopeSpans", "spans", "traceId", "spanId", "parentSpanId", "startTimeUnixNano",
    "endTimeUnixNano", "attributes", "key", "value", "stringValue", "intValue", "resource", "context",
    "span_id", "trace_id", "parent_id", "results", "failure_mode", "is_resolved", "trial_name",
    "total_input_tokens", "trial", "reward", "traj", "info", "role", "content", "tool_calls", "format",
    "run_id", "attempt", "label", "note", "reviewer", "dimensions", "tasks",
]), st.text(max_size=6))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)), max_leaves=25)


def _mutate(text: str, how: int) -> str:
    """Turn valid JSON text into a hostile variant: a NaN, a duplicate key, a cut, deep nesting."""
    if how == 1 and text.startswith("{") and len(text) > 2:
        return '{"task_id": NaN, ' + text[1:]
    if how == 2 and text.startswith("{") and len(text) > 2:
        return '{"zz": 1, "zz": 2, ' + text[1:]
    if how == 3:
        return text[: len(text) // 2]
    if how == 4:
        return "[" * 400 + text + "]" * 400
    if how == 5:
        return text.replace("1", "Infinity", 1)
    if how == 6:  # past Python's 4,300-digit conversion limit
        return text.replace("1", "9" * 5000, 1)
    if how == 7:  # 10**400: converts, but no 64-bit field holds it
        return text.replace("1", "1" + "0" * 400, 1)
    if how == 8:  # a float past its range
        return text.replace("1", "1e400", 1)
    if how == 9:  # a lone surrogate: half of a UTF-16 pair
        return text.replace('"', '"\\ud800', 1)
    return text


def texts(documents: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    return st.tuples(documents, st.integers(0, 9)).map(lambda d: _mutate(json.dumps(d[0], default=str), d[1]))


def files(documents: st.SearchStrategy[Any]) -> st.SearchStrategy[str | bytes]:
    return st.one_of(texts(documents), texts(values), st.binary(max_size=80), st.text(max_size=80))


def _span() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({
        "traceId": st.sampled_from(["a" * 32, "", 5]), "spanId": st.sampled_from(["b" * 16, "c" * 16, None]),
        "parentSpanId": st.sampled_from(["", "b" * 16, "c" * 16, 1]), "name": st.one_of(st.text(max_size=6), scalars),
        "startTimeUnixNano": st.one_of(st.sampled_from(["1", "2", 3]), scalars),
        "endTimeUnixNano": st.one_of(st.sampled_from(["2", "4"]), scalars),
        "attributes": st.one_of(
            st.lists(st.fixed_dictionaries({"key": st.sampled_from(["aeh.task_id", "gen_ai.operation.name",
                                                                    "gen_ai.tool.name", "aeh.attempt", 5]),
                                            "value": st.one_of(st.fixed_dictionaries(
                                                {"stringValue": st.one_of(st.just("t1"), scalars)}),
                                                st.fixed_dictionaries({"intValue": st.one_of(st.sampled_from(
                                                    ["9" * 5000, "12", "-5", "1" + "0" * 400, "x"]), scalars)}),
                                                values)}),
                     max_size=4), values),
    })


OTLP = st.one_of(
    st.lists(_span(), max_size=4).map(lambda spans: {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}),
    st.fixed_dictionaries({"resourceSpans": st.one_of(st.lists(values, max_size=3), values)}),
    st.fixed_dictionaries({"name": st.text(max_size=5), "context": st.one_of(
        st.fixed_dictionaries({"trace_id": scalars, "span_id": scalars}), values), "parent_id": scalars,
        "start_time": scalars, "attributes": values}),
)
TRAJECTORY = st.fixed_dictionaries(
    {"task_id": st.one_of(st.just("t1"), scalars), "final_output": scalars,
     "steps": st.one_of(st.lists(st.fixed_dictionaries({"kind": st.sampled_from(["tool", "model", "x"]),
                                                        "name": scalars, "args": values}), max_size=3), values)})
TERMINAL_BENCH = st.fixed_dictionaries({"results": st.one_of(st.lists(st.fixed_dictionaries(
    {"task_id": st.one_of(st.just("t1"), scalars), "failure_mode": st.one_of(st.just("unset"), scalars),
     "is_resolved": st.one_of(st.booleans(), scalars), "trial_name": scalars,
     "total_input_tokens": scalars}), max_size=3), values)})
TAU_BENCH = st.lists(st.fixed_dictionaries(
    {"task_id": scalars, "trial": scalars, "reward": scalars, "info": values,
     "traj": st.one_of(st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "tool", 5]),
                                                        "content": scalars, "tool_calls": values}), max_size=3),
                       values)}), max_size=3)
BASELINE = st.fixed_dictionaries({"format": st.one_of(st.just("aeh-baseline/1"), scalars), "run_id": scalars,
                                  "dimensions": values, "tasks": values})
LABELS = st.fixed_dictionaries({"run_id": scalars, "task_id": scalars, "attempt": scalars, "label": scalars,
                                "note": scalars})


def _check(exc: BaseException) -> None:
    assert isinstance(exc, AehError), f"{type(exc).__name__} escaped: {exc!r}"[:2000]
    assert str(exc).strip(), "an error with no message"


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield Path(tmp)


def _write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", errors="surrogatepass")
    return path


def _read_otlp(path: Path) -> None:
    for where, doc in load_otlp([path]):
        otlp_to_trajectories(doc, where=where)


def _import(fn: Callable[..., Any]) -> Callable[[Path], None]:
    def run(path: Path) -> None:
        with Store.memory() as store:
            fn(path, store)
    return run


def _labels(path: Path) -> None:
    with Store.memory() as store:
        import_labels(store, path)


READERS: dict[str, tuple[Callable[[Path], Any], st.SearchStrategy[Any], str]] = {
    "trajectory": (load_trajectories, TRAJECTORY, "t.jsonl"),
    "otlp": (_read_otlp, OTLP, "o.json"),
    "terminal_bench": (_import(lambda p, s: import_terminal_bench([p], s)), TERMINAL_BENCH, "results.json"),
    "tau_bench": (_import(import_tau_bench), TAU_BENCH, "tau.json"),
    "baseline": (load_baseline, BASELINE, "baseline.json"),
    "labels": (_labels, LABELS, "labels.jsonl"),
}


@pytest.mark.parametrize("reader", list(READERS))
def test_json_reader_raises_only_its_own_errors(reader: str, workdir: Path) -> None:
    read, documents, name = READERS[reader]

    @FUZZ
    @given(content=files(documents))
    def check(content: str | bytes) -> None:
        path = _write(workdir / reader / name, content)
        try:
            read(path)
        except BaseException as exc:  # noqa: BLE001 — the point: only AehError may come out
            _check(exc)

    (workdir / reader).mkdir(exist_ok=True)
    check()
