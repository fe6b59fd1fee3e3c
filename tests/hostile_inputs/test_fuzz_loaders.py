"""Fuzzing the input loaders: whatever the bytes, only aeh's own errors (with a message) come out.

Task and suite directories, fault profiles, price tables and label files get generated YAML or
JSON (nested mappings and lists of odd scalars: inf, nan, huge ints, NUL bytes, anchors and
aliases) and raw text. Each loader must either accept the input or raise an `AehError` whose
message is not empty — never a RecursionError, TypeError, UnicodeError or anything else.
Examples are bounded so the file runs in a few seconds.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aeh.errors import AehError
from aeh.pricing import load_price_table
from aeh.store import Store, import_labels
from aeh.suite.loader import load_suite
from aeh.tools.faults import load_fault_profile, resolve_fault_profile

# ~13 s of CPU: the fuzzing runs in the full suite, not in the editing loop
pytestmark = pytest.mark.slow

FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

SUITE_PY = """
from aeh.tools._tools import ToolRegistry

tools = ToolRegistry()

@tools.tool("echo")
def echo(args, env):
    return args
"""

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.sampled_from(["echo", "exact", "contains", "regex", "judge", "[", "(a|aa)+$", "\x00", "500", "timeout"]),
)
keys = st.one_of(st.sampled_from([
    "id", "prompt", "tools", "graders", "kind", "expected", "pattern", "budget", "timeout_s", "max_steps",
    "plan", "tool", "args", "rate", "rates", "mode", "kinds", "burst_length", "version", "date", "models",
    "input_per_mtok", "output_per_mtok", "aliases", "run_id", "task_id", "attempt", "label", "fixtures",
    "invariants", "golden", "metadata",
]), st.text(max_size=8))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)), max_leaves=20)
mappings = st.dictionaries(keys, values, max_size=8)

TASK_LIKE = st.fixed_dictionaries(
    {"id": st.sampled_from(["t1", "t 1", ""]), "prompt": st.sampled_from(["hi", ""]),
     "graders": st.one_of(values, st.just([{"kind": "exact", "expected": "hi"}]))},
    optional={"tools": values, "budget": st.dictionaries(st.sampled_from(["timeout_s", "max_steps", "x"]), values),
              "plan": values, "invariants": values, "fixtures": values},
)


def _dump(data: Any) -> str:
    try:
        return yaml.safe_dump(data, allow_unicode=True)
    except (yaml.YAMLError, ValueError):  # e.g. a surrogate the emitter refuses: send raw text instead
        return repr(data)


yaml_texts = st.one_of(
    mappings.map(_dump), TASK_LIKE.map(_dump), values.map(_dump), st.text(max_size=200),
    st.sampled_from([
        "a: &a [*a]\n", "a: 1\na: 2\n", "[" * 3000 + "]" * 3000, "{" * 2000, "!!python/object:os.system {}\n",
        "a: !!binary '@@'\n", "? [a, b]\n: c\n", "a: *nowhere\n", "--- 1\n--- 2\n", "\ufeffid: t1\n",
    ]),
)


def _check(exc: BaseException) -> None:
    assert isinstance(exc, AehError), f"{type(exc).__name__} escaped: {exc}"
    assert str(exc).strip(), "an error with no message"


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "s"
        (root / "tasks").mkdir(parents=True)
        (root / "suite.py").write_text(SUITE_PY)
        yield Path(tmp)


@FUZZ
@given(task=yaml_texts, golden=st.one_of(st.none(), yaml_texts))
def test_task_and_suite_directories(workdir: Path, task: str, golden: str | None) -> None:
    root = workdir / "s"
    (root / "tasks" / "t.yaml").write_text(task, encoding="utf-8", errors="surrogatepass")
    goldens = root / "goldens"
    goldens.mkdir(exist_ok=True)
    (goldens / "g.yaml").unlink(missing_ok=True)
    if golden is not None:
        (goldens / "g.yaml").write_text(golden, encoding="utf-8", errors="surrogatepass")
    try:
        load_suite(root)
    except BaseException as exc:  # noqa: BLE001 — the point of the test
        _check(exc)


@FUZZ
@given(spec=st.text(max_size=30))
def test_suite_names(spec: str) -> None:
    try:
        load_suite(spec)
    except BaseException as exc:  # noqa: BLE001
        _check(exc)


@FUZZ
@given(text=yaml_texts, data=mappings, rate=st.one_of(st.none(), st.floats()), mode=st.sampled_from([None, "burst", "x"]))
def test_fault_profiles(workdir: Path, text: str, data: dict[str, Any], rate: float | None, mode: str | None) -> None:
    path = workdir / "faults.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    for source in (path, data):
        try:
            profile = resolve_fault_profile(source, fault_rate=rate, mode=mode)
        except BaseException as exc:  # noqa: BLE001
            _check(exc)
        else:
            assert profile is not None and math.isfinite(profile.total_rate)
    try:
        load_fault_profile(path)
    except BaseException as exc:  # noqa: BLE001
        _check(exc)


@FUZZ
@given(text=yaml_texts)
def test_price_tables(workdir: Path, text: str) -> None:
    path = workdir / "prices.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_price_table(path)
    except BaseException as exc:  # noqa: BLE001
        _check(exc)


label_lines = st.one_of(
    st.dictionaries(keys, values, max_size=6).map(lambda d: json.dumps(d, default=str)),
    st.fixed_dictionaries({"run_id": st.text(max_size=5), "task_id": st.text(max_size=5),
                           "attempt": scalars, "label": scalars}).map(lambda d: json.dumps(d, default=str)),
    st.text(max_size=60), st.sampled_from(["[" * 5000, "{\"label\": NaN}", "null", "1e999"]),
)


@FUZZ
@given(lines=st.lists(label_lines, max_size=5), raw=st.one_of(st.none(), st.binary(max_size=64)))
def test_label_files(workdir: Path, lines: list[str], raw: bytes | None) -> None:
    path = workdir / "labels.jsonl"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    with Store.memory() as store:
        try:
            import_labels(store, path)
        except BaseException as exc:  # noqa: BLE001
            _check(exc)
