"""Malformed inputs end in exit 2 and a clear `file:field: … — fix` message: never a traceback,
a hang, a silently accepted input, or a store file left behind by a command that refused.

Each case writes its inputs into a fresh directory, runs `aeh` in-process and checks the exit
code, a piece of the message that names the file/field/fix, that no runs.db appeared, and
(by pytest-timeout) that it finished.
"""

from __future__ import annotations

import os
import textwrap
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from aeh.cli import main

SUITE_PY = """
from aeh.tools._tools import ToolRegistry

tools = ToolRegistry()

@tools.tool("echo")
def echo(args, env):
    return args
"""

TASK = """
id: t1
prompt: say hi
tools: [echo]
plan:
  - {tool: echo, args: {x: 1}}
reference_answer: hi
graders:
  - kind: exact
    expected: hi
budget: {max_steps: 4, timeout_s: 20}
"""

LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{x}: &{x} [{', '.join([f'*{p}'] * 9)}]\n" for p, x in zip("abcdefgh", "bcdefghi", strict=True)
)


@dataclass
class Case:
    """One malformed input: files to write (relative path → text, or a callable given the root)."""

    id: str
    argv: list[str]
    expect: str
    files: dict[str, str] = field(default_factory=dict)
    setup: Callable[[Path], None] | None = None
    code: int = 2
    #: The run had started (its store holds it as failed) when the input proved bad.
    store_ok: bool = False
    #: Environment variables set for the case (limits such as AEH_MAX_INPUT_BYTES).
    env: dict[str, str] = field(default_factory=dict)


def _suite(task: str = TASK, suite_py: str = SUITE_PY, **extra: str) -> dict[str, str]:
    return {"s/suite.py": suite_py, "s/tasks/t1.yaml": task, **extra}


def _run(*extra: str) -> list[str]:
    return ["run", "--suite", "s", "--attempts", "1", "--log-level", "silent", "--db", "out/runs.db", *extra]


def _symlink_dev_zero(root: Path) -> None:
    os.symlink("/dev/zero", root / "s" / "tasks" / "zero.yaml")


def _binary(name: str) -> Callable[[Path], None]:
    def write(root: Path) -> None:
        (root / name).write_bytes(bytes(range(256)) * 4)
    return write


def _directory(name: str) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        (root / name).mkdir()
    return make


CASES = [
    # --- suite files ---
    Case("nested-yaml", _run(), "nested too deeply", _suite(task="a: " + "[" * 3000 + "]" * 3000)),
    Case("duplicate-key", _run(), "duplicate key 'graders'",
         _suite(task=TASK + "graders:\n  - kind: contains\n    expected: h\n")),
    Case("billion-laughs", _run(), "alias bomb", _suite(task=LAUGHS)),
    Case("self-alias", _run(), "refers to the mapping or list that contains it", _suite(task="a: &a [*a]\n")),
    Case("binary-task", _run(), "not UTF-8 text", _suite(), setup=_binary("s/tasks/bin.yaml")),
    Case("task-dev-zero", _run(), "not a regular file", _suite(), setup=_symlink_dev_zero),
    Case("task-is-directory", _run(), "is a directory", _suite(), setup=_directory("s/tasks/dir.yaml")),
    Case("timeout-inf", _run(), "budget.timeout_s", _suite(task=TASK.replace("timeout_s: 20", "timeout_s: 1e400"))),
    Case("timeout-nan", _run(), "budget.timeout_s", _suite(task=TASK.replace("timeout_s: 20", "timeout_s: .nan"))),
    Case("timeout-negative", _run(), "budget.timeout_s", _suite(task=TASK.replace("timeout_s: 20", "timeout_s: -1"))),
    Case("suite-sys-exit", _run(), "called sys.exit(0)", _suite(suite_py=SUITE_PY + "import sys\nsys.exit(0)\n")),
    Case("suite-deep-recursion", _run(), "recursed too deeply",
         _suite(suite_py=SUITE_PY + "def f(n):\n    return f(n + 1)\nf(0)\n")),
    Case("lifespan-raises", _run(), "lifespan() failed to start: RuntimeError: no fixture server",
         _suite(suite_py=SUITE_PY + "def lifespan():\n    raise RuntimeError('no fixture server')\n"),
         store_ok=True),
    # --- run options ---
    Case("task-typo", _run("--task", "t11"), "did you mean 't1'", _suite()),
    Case("seed-too-big", _run("--seed", str(2**70)), "seed must be an integer from 0", _suite()),
    Case("seed-negative", _run("--seed", "-1"), "seed must be an integer from 0", _suite()),
    Case("attempts-absurd", [*_run(), "--attempts", str(10**12)], "attempts must be an integer from 1 to", _suite()),
    Case("attempts-zero", [*_run(), "--attempts", "0"], "attempts must be an integer from 1 to", _suite()),
    Case("concurrency-zero", _run("--concurrency", "0"), "concurrency must be an integer", _suite()),
    Case("fault-mode-no-rate", _run("--fault-mode", "burst"), "needs a fault profile or --fault-rate", _suite()),
    Case("fault-rate-above-one", _run("--fault-rate", "2"), "rate", _suite()),
    Case("fault-rate-nan", _run("--fault-rate", "nan"), "rate", _suite()),
    Case("fault-profile-unknown-tool", _run("--fault-profile", "faults.yaml"), "'search', which suite 's' does not have",
         {**_suite(), "faults.yaml": "rate: 0.1\ntools: [search]\n"}),
    Case("fault-profile-duplicate-key", _run("--fault-profile", "faults.yaml"), "duplicate key 'rate'",
         {**_suite(), "faults.yaml": "rate: 0.1\nrate: 0.2\n"}),
    Case("fault-profile-directory", _run("--fault-profile", "fp"), "fault profile not found", _suite(),
         setup=_directory("fp")),
    Case("price-table-binary", _run("--price-table", "prices.bin"), "not UTF-8 text", _suite(),
         setup=_binary("prices.bin")),
    Case("price-table-directory", _run("--price-table", "pt"), "is a directory", _suite(), setup=_directory("pt")),
    Case("price-table-inf", _run("--price-table", "p.yaml"), "input_per_mtok",
         {**_suite(), "p.yaml": "version: x\ndate: 2026-01-01\nmodels:\n  m: {input_per_mtok: .inf, output_per_mtok: 1}\n"}),
    Case("adapter-option-not-kv", _run("--adapter-option", "oops"), "is not KEY=VALUE", _suite()),
    # --- read-only commands never create a store ---
    Case("runs-missing-db", ["runs", "--db", "typo/x.db"], "no run store at"),
    Case("trace-missing-db", ["trace", "--run-id", "r", "--task", "t", "--db", "typo/x.db"], "no run store at"),
    Case("review-missing-db", ["review", "--run-id", "r", "--db", "typo/x.db"], "no run store at"),
    Case("compare-missing-db", ["compare", "a", "b", "--db", "typo/x.db"], "no run store at"),
    Case("compare-fdr", ["compare", "a", "b", "--fdr", "2", "--db", "typo/x.db"], "--fdr must be"),
    Case("compare-fdr-nan", ["compare", "a", "b", "--fdr", "nan"], "--fdr must be"),
    Case("score-missing-db", ["score", "r", "--db", "typo/x.db"], "no run store at"),
    Case("baseline-missing-db", ["baseline", "save", "r", "--out", "b.json", "--db", "typo/x.db"], "no run store at"),
    Case("export-missing-db", ["export", "otel", "r", "--out", "x.json", "--db", "typo/x.db"], "no run store at"),
    Case("judge-agreement-missing-db", ["judge-agreement", "--run-id", "r", "--db", "typo/x.db"], "no run store at"),
    Case("replay-missing-db", ["replay", "--run-id", "r", "--db", "typo/x.db"], "no run store at"),
    Case("matrix-missing-db", ["matrix", "r", "--db", "typo/x.db"], "no run store at"),
    Case("drift-missing-db", ["drift", "--suite", "s", "--db", "typo/x.db"], "no run store at"),
]


def _invoke(argv: list[str]) -> tuple[int, str]:
    """Exit code and combined output; any exception escaping `main` is a failed case."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException:  # noqa: BLE001 — the point: nothing may escape as a traceback
        pytest.fail(f"aeh {' '.join(argv)} raised:\n{traceback.format_exc()}")
    return code, ""


def _write(root: Path, case: Case) -> None:
    for rel, text in case.files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    if case.setup is not None:
        case.setup(root)


def _stores(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.db*")]


def check_case(case: Case, root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Write the case's files into `root`, run it there, and check exit code, message and stores."""
    _write(root, case)
    monkeypatch.chdir(root)
    monkeypatch.delenv("AEH_DB", raising=False)
    for key, value in case.env.items():
        monkeypatch.setenv(key, value)
    code, _ = _invoke(case.argv)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" not in text
    assert code == case.code, text
    assert case.expect in text, text
    assert case.store_ok or _stores(root) == [], f"a refused command left a store behind: {_stores(root)}"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_input_is_a_clear_error(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    check_case(case, tmp_path, monkeypatch, capsys)
    assert not (tmp_path / "typo").exists()


# --- inputs that meet a stored run --------------------------------------------------------


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store holding one finished run of the small suite; tests copy it before breaking it."""
    root = tmp_path_factory.mktemp("stored")
    _write(root, Case("-", [], "", _suite()))
    cwd = Path.cwd()
    os.chdir(root)
    try:
        assert main(_run("--seed", "1")) == 0
    finally:
        os.chdir(cwd)
    from aeh.store import Store

    with Store(root / "out" / "runs.db") as store:
        run_id = store.runs()[0].run_id
    return root / "out" / "runs.db", run_id


def _corrupt(sql: str) -> Callable[[Path], None]:
    def run(db: Path) -> None:
        import sqlite3

        with sqlite3.connect(db) as conn:
            conn.execute(sql)
        conn.close()
    return run


STORED_CASES = [
    # (id, argv after the db is given, expected text, a change to the copied store)
    ("runs-corrupt-config", ["runs"], "a stored runs row is corrupt (run {run}",
     _corrupt("UPDATE runs SET config = '{not json'")),
    ("trace-corrupt-span", ["trace", "--run-id", "{run}", "--task", "t1", "--out", "t.html"],
     "a stored spans row is corrupt (run {run}, task 't1', attempt 0",
     _corrupt("UPDATE spans SET attributes = '[1,'")),
    ("trace-corrupt-attempt", ["trace", "--run-id", "{run}", "--task", "t1", "--out", "t.html"],
     "a stored attempts row is corrupt (run {run}, task 't1', attempt 0",
     _corrupt("UPDATE attempts SET tool_calls = 'nope'")),
    ("trace-out-directory", ["trace", "--run-id", "{run}", "--task", "t1", "--out", "."], "Is a directory", None),
    ("export-out-directory", ["export", "otel", "{run}", "--out", "."], "Is a directory", None),
    ("review-import-binary", ["review", "--run-id", "{run}", "--import", "labels.bin"], "not UTF-8 text", None),
    ("review-import-directory", ["review", "--run-id", "{run}", "--import", "."], "is a directory", None),
    ("review-import-deep-json", ["review", "--run-id", "{run}", "--import", "deep.jsonl"], "nested too deeply", None),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", STORED_CASES, ids=[c[0] for c in STORED_CASES])
def test_malformed_input_against_a_stored_run(case: tuple, stored_run: tuple[Path, str], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    _, argv, expect, change = case
    source, run_id = stored_run
    db = tmp_path / "runs.db"
    db.write_bytes(source.read_bytes())
    if change is not None:
        change(db)
    (tmp_path / "labels.bin").write_bytes(bytes(range(256)))
    (tmp_path / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    monkeypatch.chdir(tmp_path)
    code, _ = _invoke([a.replace("{run}", run_id) for a in argv] + ["--db", str(db)])
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" not in text
    assert code == 2, text
    assert expect.replace("{run}", run_id) in text, text
