"""Hostile files handed to every JSON reader: exit 2 naming file, field and fix, within a time
limit, no traceback, and nothing created (no runs.db, no folder for it).

One row per case: deep nesting (a RecursionError before), a symlink to /dev/zero (read to
MemoryError before), a FIFO (blocked forever before), gzip and binary content, NaN/Infinity
tokens, duplicate keys (the second value won silently before), a file over the size limit,
path-unsafe ids, OTel spans that are their own parents or carry fields of the wrong type, a
suite.py that loops at import, and a Ctrl-C while suite.py imports.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from aeh.cli import main
from tests.hostile_inputs.test_malformed_inputs import SUITE_PY, TASK, Case, _invoke, check_case

DEEP = "[" * 100_000 + "]" * 100_000
DEEPISH = "[" * 300 + "]" * 300  # parses in Python, past the 200-level limit
TRAJ = {"task_id": "t1", "final_output": "hi", "steps": []}


def _span(span_id: str, parent: str = "", **extra: object) -> dict[str, object]:
    return {"traceId": "a" * 32, "spanId": span_id, "parentSpanId": parent, "name": "agent",
            "startTimeUnixNano": "1", "endTimeUnixNano": "2",
            "attributes": [{"key": "aeh.task_id", "value": {"stringValue": "t1"}}], **extra}


def _otlp(*spans: dict[str, object]) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]})


def _suite(suite_py: str = SUITE_PY) -> dict[str, str]:
    return {"s/suite.py": suite_py, "s/tasks/t1.yaml": TASK}


def _dev_zero(name: str) -> Callable[[Path], None]:
    return lambda root: os.symlink("/dev/zero", root / name)


def _fifo(name: str) -> Callable[[Path], None]:
    return lambda root: os.mkfifo(root / name)


def _gzip(name: str, text: str = json.dumps(TRAJ)) -> Callable[[Path], None]:
    return lambda root: (root / name).write_bytes(gzip.compress(text.encode()))


def _binary(name: str) -> Callable[[Path], None]:
    return lambda root: (root / name).write_bytes(b"\x00\x01\x02\xff" * 64)


DB = ["--db", "out/runs.db"]


def _traj(path: str) -> list[str]:
    return ["import", "trajectory", "--suite", "s", path, *DB]


def _grade(path: str) -> list[str]:
    return ["grade", "--suite", "s", path, *DB]


def _otel(path: str) -> list[str]:
    return ["import", "otel", "--suite", "s", path, *DB]


def _tb(path: str) -> list[str]:
    return ["import", "terminal-bench", path, *DB]


def _tau(path: str) -> list[str]:
    return ["import", "tau-bench", path, *DB]


def _gate(path: str) -> list[str]:
    return ["gate", "--baseline", path, *DB]


def _readers() -> list[Case]:
    """The file-level cases, for each of the six JSON readers."""
    cases = []
    for reader, argv, good in [
        ("trajectory", _traj, json.dumps(TRAJ)),
        ("grade", _grade, json.dumps(TRAJ)),
        ("otel", _otel, _otlp(_span("b" * 16))),
        ("tau", _tau, json.dumps([{"task_id": 1, "trial": 0, "reward": 1.0, "traj": []}])),
        ("terminal-bench", _tb, json.dumps({"results": [{"task_id": "t1", "failure_mode": "unset",
                                                          "is_resolved": True}]})),
        ("baseline", _gate, json.dumps({"format": "aeh-baseline/1"})),
    ]:
        suite = _suite() if reader in ("trajectory", "grade", "otel") else {}
        name = "results.json" if reader == "terminal-bench" else "in.json"
        cases += [
            Case(f"{reader}-deep", argv(name), f"{name}:-: nested too deeply", {**suite, name: DEEP}),
            Case(f"{reader}-past-depth-limit", argv(name), "nested more than 200 levels deep",
                 {**suite, name: DEEPISH}),
            Case(f"{reader}-dev-zero", argv(name), "(a device)" if reader != "terminal-bench" else "not a directory",
                 suite, setup=_dev_zero(name)),
            Case(f"{reader}-fifo", argv(name), "(a FIFO)" if reader != "terminal-bench" else "not a directory",
                 suite, setup=_fifo(name)),
            Case(f"{reader}-gzip", argv(name), "looks like gzip-compressed data (decompress it first", suite,
                 setup=_gzip(name, good)),
            Case(f"{reader}-binary", argv(name), "not UTF-8 text: it looks like binary data", suite,
                 setup=_binary(name)),
            Case(f"{reader}-too-big", argv(name), "input files are limited to 100 (set AEH_MAX_INPUT_BYTES",
                 {**suite, name: good + " " * 200}, env={"AEH_MAX_INPUT_BYTES": "100"}),
            Case(f"{reader}-duplicate-key", argv(name), "duplicate key 'zz' (the later value would silently",
                 {**suite, name: good[:-1] + ', "zz": 1, "zz": 2' + good[-1] if good.endswith("}") else
                  good[:-2] + ', "zz": 1, "zz": 2}]'}),
            Case(f"{reader}-nan", argv(name), ":zz: NaN is not a JSON number — write a finite number",
                 {**suite, name: (good[:-1] + ', "zz": NaN' + good[-1]) if good.endswith("}") else
                  good[:-2] + ', "zz": NaN}]'}),
            Case(f"{reader}-infinity", argv(name), ":zz: -Infinity is not a JSON number",
                 {**suite, name: (good[:-1] + ', "zz": -Infinity' + good[-1]) if good.endswith("}") else
                  good[:-2] + ', "zz": -Infinity}]'}),
        ]
    return cases


CASES = [
    *_readers(),
    Case("trajectory-jsonl-duplicate-key", _traj("t.jsonl"), "t.jsonl:2:task_id: duplicate key 'task_id'",
         {**_suite(), "t.jsonl": json.dumps(TRAJ) + '\n{"task_id": "t1", "task_id": "t2", "steps": []}\n'}),
    Case("terminal-bench-nan-tokens", _tb("results.json"), "results.json:2:total_input_tokens: NaN is not a JSON",
         {"results.json": '{"results": [{"task_id": "t1", "failure_mode": "unset", "is_resolved": true,\n'
                          '"total_input_tokens": NaN}]}'}),
    Case("terminal-bench-task-id-escapes", _tb("results.json"), "results[0].task_id: '../../x' holds '/'",
         {"results.json": json.dumps({"results": [{"task_id": "../../x", "failure_mode": "unset",
                                                   "is_resolved": True}]})}),
    Case("otel-own-parent", _otel("o.json"), "spans[0].parentSpanId: the span is its own parent",
         {**_suite(), "o.json": _otlp(_span("b" * 16, "b" * 16))}),
    Case("otel-parent-loop", _otel("o.json"), "is its own ancestor (a loop of parentSpanId)",
         {**_suite(), "o.json": _otlp(_span("b" * 16, "c" * 16), _span("c" * 16, "b" * 16))}),
    Case("otel-start-time-text", _otel("o.json"), "spans[0].startTimeUnixNano: 'soon' is not nanoseconds",
         {**_suite(), "o.json": _otlp(_span("b" * 16, startTimeUnixNano="soon"))}),
    Case("otel-attributes-not-list", _otel("o.json"), "spans[0].attributes: not a list",
         {**_suite(), "o.json": _otlp(_span("b" * 16, attributes="nope"))}),
    Case("otel-attribute-key-not-text", _otel("o.json"), "spans[0].attributes[0]: not a {key, value} pair",
         {**_suite(), "o.json": _otlp(_span("b" * 16, attributes=[{"key": 5, "value": {}}]))}),
    Case("otel-span-id-number", _otel("o.json"), "spans[0].spanId: not a string (int)",
         {**_suite(), "o.json": _otlp(_span("b" * 16) | {"spanId": 7})}),
    Case("otel-resource-spans-not-list", _otel("o.json"), "o.json:resourceSpans: not a list",
         {**_suite(), "o.json": json.dumps({"resourceSpans": {"x": 1}})}),
    Case("otel-int-value-5000-digits", _otel("o.json"),
         "spans[0].attributes[1].value.intValue: an integer of 5000 digits",
         {**_suite(), "o.json": _otlp(_span("b" * 16, attributes=[
             {"key": "aeh.task_id", "value": {"stringValue": "t1"}},
             {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "9" * 5000}}]))}),
    Case("otel-parent-ring-of-three", _otel("o.json"), "is its own ancestor (a loop of parentSpanId)",
         {**_suite(), "o.json": _otlp(_span("b" * 16, "c" * 16), _span("c" * 16, "d" * 16),
                                      _span("d" * 16, "b" * 16))}),
    Case("otel-duplicate-span-id", _otel("o.json"), "spans[1].spanId: 'bbbbbbbbbbbbbbbb' is the id of resourceSpans[0].scopeSpans[0].spans[0] too",
         {**_suite(), "o.json": _otlp(_span("b" * 16), _span("b" * 16, name="again"))}),
    Case("otel-end-before-start", _otel("o.json"), "spans[0].endTimeUnixNano: 1 is before startTimeUnixNano 5",
         {**_suite(), "o.json": _otlp(_span("b" * 16, startTimeUnixNano="5", endTimeUnixNano="1"))}),
    Case("trajectory-tokens-in-10-400", _traj("t.json"), "t.json:steps[0].tokens_in: an integer of 401 digits",
         {**_suite(), "t.json": json.dumps({**TRAJ, "steps": [{"kind": "model", "name": "m", "tokens_in": 10**400}]})}),
    Case("grade-tokens-in-10-400", _grade("t.json"), "t.json:steps[0].tokens_in: an integer of 401 digits",
         {**_suite(), "t.json": json.dumps({**TRAJ, "steps": [{"kind": "model", "name": "m", "tokens_in": 10**400}]})}),
    Case("trajectory-lone-surrogate", _traj("t.json"), "t.json:final_output: a lone surrogate",
         {**_suite(), "t.json": '{"task_id": "t1", "final_output": "hi \\ud800 there", "steps": []}'}),
    Case("grade-lone-surrogate", _grade("t.json"), "t.json:steps[0].result: a lone surrogate",
         {**_suite(), "t.json": '{"task_id": "t1", "final_output": "hi", "steps": [{"kind": "tool", "name": "x", '
                                '"result": "\\udc00"}]}'}),
    Case("import-run-id-escapes", [*_traj("t.json"), "--run-id", "../../x"], "--run-id '../../x' holds '/'",
         {**_suite(), "t.json": json.dumps(TRAJ)}),
    Case("grade-run-id-escapes", [*_grade("t.json"), "--run-id", "a/../../x"], "--run-id 'a/../../x' holds '/'",
         {**_suite(), "t.json": json.dumps(TRAJ)}),
    Case("run-id-escapes", ["run", "--suite", "s", "--attempts", "1", "--run-id", "../../x", *DB],
         "run id '../../x' holds '/'", _suite()),
    Case("run-id-dot", ["run", "--suite", "s", "--attempts", "1", "--run-id", "..", *DB], "starts with '.'", _suite()),
    Case("suite-loops-at-import", ["run", "--suite", "s", "--attempts", "1", "--log-level", "silent", *DB],
         "s/suite.py:(import): importing suite.py did not finish within 1 s", _suite(SUITE_PY + "while True:\n    pass\n"),
         env={"AEH_SUITE_IMPORT_TIMEOUT": "1"}),
    Case("suite-sleeps-at-import", ["run", "--suite", "s", "--attempts", "1", "--log-level", "silent", *DB],
         "did not finish within 1 s", _suite(SUITE_PY + "import time\ntime.sleep(600)\n"),
         env={"AEH_SUITE_IMPORT_TIMEOUT": "1"}),
    Case("suite-swallows-exceptions-at-import", ["run", "--suite", "s", "--attempts", "1", "--log-level", "silent",
                                                 *DB], "did not finish within 1 s",
         _suite(SUITE_PY + "while True:\n    try:\n        sum(range(10**6))\n    except Exception:\n        pass\n"),
         env={"AEH_SUITE_IMPORT_TIMEOUT": "1"}),
    Case("suite-interrupted-at-import", ["run", "--suite", "s", "--attempts", "1", *DB],
         "aeh: interrupted before the run started; nothing was stored", _suite(SUITE_PY + "raise KeyboardInterrupt\n"),
         code=130),
    Case("max-input-bytes-bad", _traj("t.json"), "AEH_MAX_INPUT_BYTES='lots' is not a positive integer",
         {**_suite(), "t.json": json.dumps(TRAJ)}, env={"AEH_MAX_INPUT_BYTES": "lots"}),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_file_is_refused_cleanly(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    check_case(case, tmp_path, monkeypatch, capsys)
    assert not (tmp_path / "out").exists(), f"a refused command created {sorted((tmp_path / 'out').rglob('*'))}"


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("stored")
    (root / "s" / "tasks").mkdir(parents=True)
    (root / "s" / "suite.py").write_text(SUITE_PY)
    (root / "s" / "tasks" / "t1.yaml").write_text(TASK)
    db = root / "runs.db"
    assert main(["run", "--suite", str(root / "s"), "--attempts", "1", "--seed", "1", "--log-level", "silent",
                 "--db", str(db)]) == 0
    from aeh.store import Store

    with Store(db) as store:
        return db, store.runs()[0].run_id


LABEL_CASES = [
    ("labels-duplicate-key", '{"run_id": "R", "task_id": "t1", "attempt": 0, "label": true, "label": false}\n',
     ":1:label: duplicate key 'label'"),
    ("labels-nan", '{"run_id": "R", "task_id": "t1", "attempt": NaN, "label": true}\n', ":1:attempt: NaN is not a JSON"),
    ("labels-past-depth-limit", '{"run_id": "R", "note": ' + DEEPISH + "}\n", "nested more than 200 levels deep"),
    ("labels-gzip", None, "looks like gzip-compressed data"),
    ("labels-fifo", None, "(a FIFO)"),
    ("labels-dev-zero", None, "(a device)"),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", LABEL_CASES, ids=[c[0] for c in LABEL_CASES])
def test_hostile_label_file_is_refused_cleanly(case: tuple[str, str | None, str], stored: tuple[Path, str],
                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    name, text, expect = case
    source, run_id = stored
    db = tmp_path / "runs.db"
    shutil.copy(source, db)
    labels = tmp_path / "labels.jsonl"
    if text is not None:
        labels.write_text(text.replace('"R"', json.dumps(run_id)))
    elif name == "labels-gzip":
        labels.write_bytes(gzip.compress(b'{"label": true}\n'))
    elif name == "labels-fifo":
        os.mkfifo(labels)
    else:
        os.symlink("/dev/zero", labels)
    before = db.read_bytes()
    monkeypatch.chdir(tmp_path)
    code, _ = _invoke(["review", "--run-id", run_id, "--import", str(labels), "--db", str(db)])
    out = capsys.readouterr()
    assert "Traceback" not in out.out + out.err
    assert code == 2, out.err
    assert expect in out.err, out.err
    assert db.read_bytes() == before  # no label was stored
