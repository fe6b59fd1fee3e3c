"""The `aeh` command as a user runs it."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from aeh.cli import build_parser, main


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _table_body(text: str) -> str:
    """The table minus the run id and the wall-clock latency column (timing is not seeded)."""
    lines = text.split("\n\n")[0].splitlines()[1:]
    # The p50 column comes before the failures column: blank it, keep the failures.
    return "\n".join(re.sub(r" +\d+\.\d\d  (?=\S)", " <p50>  ", line) for line in lines)


def test_run_prints_table_suite_line_and_run_id(db: Path) -> None:
    code, out, err = run_cli("run", "--suite", "smoke", "--attempts", "3", "--seed", "1", "--db", str(db))
    assert code == 0
    assert re.search(r"wilson 95%", out)
    assert re.search(r"suite rate \d\.\d{3}\s+95% CI \[\d\.\d{3}, \d\.\d{3}\] over 5 tasks", out)
    assert "harness errors 0/15" in out
    assert re.search(r"run id \d{8}-\d{6}-[0-9a-f]{6}", out)
    assert "price table" in out
    assert len([line for line in err.splitlines() if "/3" in line]) == 5, "progress: one line per task"


def test_same_seed_same_table_other_seed_differs(db: Path) -> None:
    args = ("run", "--suite", "toy_math", "--attempts", "5", "--db", str(db), "--log-level", "silent")
    _, first, _ = run_cli(*args, "--seed", "1")
    _, again, _ = run_cli(*args, "--seed", "1")
    _, other, _ = run_cli(*args, "--seed", "2", "--model", "mock-degraded")
    assert _table_body(first) == _table_body(again)
    assert _table_body(first) != _table_body(other)


def test_dry_run_calls_nothing_and_estimates(db: Path) -> None:
    code, out, _ = run_cli("run", "--suite", "smoke", "--dry-run", "--db", str(db))
    assert code == 0 and "ESTIMATE" in out and "no model was called" in out
    assert not db.exists(), "a dry run writes no run"


@pytest.mark.slow
def test_tasks_validate_shipped_and_broken(tmp_path: Path) -> None:
    code, out, _ = run_cli("tasks", "validate")
    assert code == 0 and "✓ smoke" in out and "✓ toy_math" in out
    broken = tmp_path / "broken"
    (broken / "tasks").mkdir(parents=True)
    (broken / "suite.py").write_text("from aeh.tools import ToolRegistry\ntools = ToolRegistry()\n")
    (broken / "tasks" / "a.yaml").write_text("id: a\nprompt: hi\ngraders: [{kind: exact, expected: x}]\nbudjet: {}\n")
    code, out, _ = run_cli("tasks", "validate", "--suite", str(broken))
    assert code == 2 and "a.yaml:budjet" in out


def test_bad_options_exit_2_with_a_message(db: Path) -> None:
    code, _, err = run_cli("run", "--suite", "smoke", "--adapter", "nope", "--db", str(db))
    assert code == 2 and "unknown adapter 'nope'" in err
    code, _, err = run_cli("run", "--suite", "smoke", "--log-level", "loud", "--db", str(db))
    assert code == 2 and "--log-level" in err
    code, _, err = run_cli("run", "--suite", "smoke", "--model", "mock-genius", "--db", str(db))
    assert code == 2 and "mock profile" in err


def test_jsonl_logs_carry_the_trace_contract(db: Path) -> None:
    code, _, err = run_cli("run", "--suite", "toy_math", "--attempts", "2", "--seed", "1", "--db", str(db),
                           "--log-level", "calls", "--log-format", "jsonl")
    assert code == 0
    events = [json.loads(line) for line in err.splitlines() if line.strip()]
    spans = [e for e in events if e["event"] == "span"]
    assert spans and {"run_id", "task_id", "attempt", "span_id", "parent_span_id", "category"} <= set(spans[0])
    assert {e["category"] for e in spans} >= {"tools", "model", "grading"}


def test_log_only_and_exclude_filter_categories(db: Path) -> None:
    _, _, only = run_cli("run", "--suite", "toy_math", "--attempts", "1", "--seed", "1", "--db", str(db),
                         "--log-level", "steps", "--log-only", "tools")
    span_lines = [line for line in only.splitlines() if "[" in line and "]" in line and "#" in line]
    assert span_lines and all("[tools]" in line for line in span_lines)
    _, _, excl = run_cli("run", "--suite", "toy_math", "--attempts", "1", "--seed", "1", "--db", str(db),
                         "--log-level", "calls", "--log-exclude", "model,grading")
    assert "[model]" not in excl and "[grading]" not in excl and "[tools]" in excl


def test_pretty_logs_indent_by_depth(db: Path) -> None:
    _, _, err = run_cli("run", "--suite", "toy_math", "--attempts", "1", "--seed", "1", "--db", str(db),
                        "--log-level", "calls", "--concurrency", "1")
    grader = next(line for line in err.splitlines() if "grader:" in line)
    attempt = next(line for line in err.splitlines() if "· attempt [scheduler]" in line or "✗ attempt [scheduler]" in line)
    indent = lambda s: len(s) - len(s.lstrip())  # noqa: E731
    assert indent(grader) > indent(attempt)


def test_silent_prints_no_logs(db: Path) -> None:
    _, out, err = run_cli("run", "--suite", "toy_math", "--attempts", "1", "--seed", "1", "--db", str(db),
                          "--log-level", "silent")
    assert err == "" and "suite rate" in out


def test_every_command_has_help() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, sp in sub.choices.items():
        assert sp.format_help().strip(), name
        assert sub._choices_actions and any(c.dest == name and c.help for c in sub._choices_actions), name


@pytest.mark.parametrize("argv", [["--version"], ["run", "--help"]])
def test_help_and_version(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc, redirect_stdout(io.StringIO()):
        main(argv)
    assert exc.value.code == 0


def test_adapter_options_are_parsed_and_checked(db: Path) -> None:
    code, _, err = run_cli("run", "--suite", "toy_math", "--db", str(db), "--adapter-option", "oops")
    assert code == 2 and "is not KEY=VALUE" in err
    code, _, err = run_cli("run", "--suite", "toy_math", "--db", str(db), "--adapter-option", "p_wrong=0.9",
                           "--adapter-option", "colour=blue")
    assert code == 2 and "unknown mock adapter option(s): colour" in err


def test_live_adapter_without_key_fails_once_and_clearly(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    code, _, err = run_cli("run", "--suite", "toy_math", "--adapter", "react", "--model", "gpt-4o-mini",
                           "--db", str(db))
    assert code == 2 and "OPENAI_API_KEY" in err
    assert not db.exists() or "harness" not in err
