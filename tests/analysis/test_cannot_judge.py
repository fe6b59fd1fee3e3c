"""A verdict needs a valid measurement on both sides: compare, gate and drift say "cannot judge"
(exit 4) instead of passing a dead run, two suites, an unfinished run or a malformed baseline."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

import aeh
from aeh.analysis import build_baseline, gate
from aeh.analysis._validity import MIN_SHARED_TASKS
from aeh.cli import EXIT_CANNOT_JUDGE, EXIT_NOT_ENOUGH_RUNS
from aeh.cli import main as cli_main
from aeh.commands.compare import format_comparison
from aeh.report import views
from aeh.store import Store

GOOD = {"x": [True] * 5, "y": [True, False, True, True, False]}
DEAD = {"x": [None] * 5, "y": [None] * 5}  # every attempt a harness error: a dead endpoint


@pytest.fixture
def db(tmp_path: Path, build) -> str:  # type: ignore[no-untyped-def]
    path = tmp_path / "runs.db"
    with Store(path) as store:
        build.run(store, "GOOD", GOOD)
        build.run(store, "GOOD2", GOOD, created_at="2025-01-02T00:00:00Z")
        build.run(store, "DEAD", DEAD, created_at="2025-01-03T00:00:00Z")
        build.run(store, "HALF", GOOD, status="interrupted", created_at="2025-01-04T00:00:00Z")
        build.run(store, "OTHER", GOOD, suite_hash="h2", created_at="2025-01-05T00:00:00Z")
        build.run(store, "EMPTY", {}, created_at="2025-01-06T00:00:00Z")
    return str(path)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli_main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_exit_4_is_cannot_judge_and_keeps_its_old_name() -> None:
    assert EXIT_CANNOT_JUDGE == EXIT_NOT_ENOUGH_RUNS == 4 and MIN_SHARED_TASKS >= 1


def test_compare_good_vs_dead_cannot_judge(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "compare", "GOOD", "DEAD", "--db", db)
    assert code == 4, out
    assert "VERDICT: CANNOT JUDGE: no verdict either way — this is not a pass" in out
    assert "run B (DEAD) has 100.0% harness errors (10 of 10 attempts, limit 2%): not a valid measurement" in out
    assert "fix the cause (`aeh report --run-id DEAD`" in out
    assert "no regression" not in out
    v = aeh.compare("GOOD", "DEAD", db=db).verdict
    assert v.status == "cannot judge" and v.regressed is None and v.mde is None
    assert [r.check for r in v.cannot_judge] == ["harness_errors"]  # 0 shared tasks follows from it


def test_compare_of_a_run_with_no_attempts_cannot_judge(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "compare", "GOOD", "EMPTY", "--db", db)
    assert code == 4 and "run B (EMPTY) has no attempts stored" in out


def test_gate_on_a_dead_run_cannot_judge(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "main.json"
    assert cli(capsys, "baseline", "save", "GOOD", "--out", str(base), "--db", db)[0] == 0
    md = tmp_path / "gate.md"
    code, out, _ = cli(capsys, "gate", "--baseline", str(base), "--run", "DEAD", "--db", db, "--markdown", str(md))
    assert code == 4, out
    assert "CANNOT JUDGE" in out and "run DEAD has 100.0% harness errors" in out and "no hard regression" not in out
    assert "Cannot judge" in md.read_text() and "No hard regression" not in md.read_text()
    result = gate(str(base), "DEAD", db)
    assert result.verdict == "cannot judge" and not result.regressed
    assert [r.check for r in result.cannot_judge] == ["harness_errors"]
    # the same baseline and a valid run of the same agent: a verdict
    assert cli(capsys, "gate", "--baseline", str(base), "--run", "GOOD2", "--db", db)[0] == 0


def test_a_dead_run_is_no_baseline(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "baseline", "save", "DEAD", "--out", str(tmp_path / "b.json"), "--db", db)
    assert code == 4 and "cannot save a baseline from this run" in err and "100.0% harness errors" in err
    assert not (tmp_path / "b.json").exists()


def test_unfinished_run_is_refused_unless_accepted(db: str, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "compare", "GOOD", "HALF", "--db", db)
    assert code == 4 and "run B (HALF) is interrupted, not finished" in out
    assert "`aeh run --resume HALF`, or pass --allow-unfinished" in out
    code, out, _ = cli(capsys, "compare", "GOOD", "HALF", "--allow-unfinished", "--db", db)
    assert code == 0 and "WARNING: run B (HALF) is interrupted, not finished" in out
    base = tmp_path / "main.json"
    assert cli(capsys, "baseline", "save", "GOOD", "--out", str(base), "--db", db)[0] == 0
    code, out, _ = cli(capsys, "gate", "--baseline", str(base), "--run", "HALF", "--db", db)
    assert code == 4 and "run HALF is interrupted, not finished" in out
    assert cli(capsys, "gate", "--baseline", str(base), "--run", "HALF", "--allow-unfinished", "--db", db)[0] == 0
    assert cli(capsys, "baseline", "save", "HALF", "--out", str(base), "--db", db)[0] == 4
    assert cli(capsys, "baseline", "save", "HALF", "--out", str(base), "--allow-unfinished", "--db", db)[0] == 0


def test_another_suite_hash_is_refused_unless_the_overlap_is_asked_for(db: str,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "compare", "GOOD", "OTHER", "--db", db)
    assert code == 4 and "the runs measured different suites" in out and "pass --overlap" in out
    assert "WARNING: suite definition changed" not in out  # the refusal says it
    code, out, _ = cli(capsys, "compare", "GOOD", "OTHER", "--overlap", "--db", db)
    assert code == 0 and "WARNING: suite definition changed" in out and "suite over 2 tasks" in out


@pytest.fixture(scope="module")
def two_suites(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    db = str(tmp_path_factory.mktemp("suites") / "runs.db")
    smoke = aeh.run("smoke", attempts=2, seed=1, db=db, progress=False).run_id
    toy = aeh.run("toy_math", attempts=2, seed=1, db=db, progress=False).run_id
    return db, smoke, toy


def test_smoke_vs_toy_math_is_refused_and_overlap_with_no_shared_task_too(two_suites, capsys) -> None:  # type: ignore[no-untyped-def]
    db, smoke, toy = two_suites
    code, out, _ = cli(capsys, "compare", smoke, toy, "--db", db)
    assert code == 4 and "A 'smoke'" in out and "B 'toy_math'" in out
    code, out, _ = cli(capsys, "compare", smoke, toy, "--overlap", "--db", db)
    assert code == 4, out
    assert "0 task(s) have valid attempts in both runs (at least 1 needed)" in out
    frame = aeh.compare(smoke, toy, db=db, overlap=True)
    assert [r.check for r in frame.verdict.cannot_judge] == ["too_few_tasks"]


def test_the_report_shows_a_red_banner_not_a_green_verdict(db: str) -> None:
    frame = aeh.compare("GOOD", "DEAD", db=db)
    html = views.compare_header(frame).data
    start = html.index("<div id='verdict'")
    banner = html[start:html.index("</div>", start)]
    assert "cannot-judge" in banner and "data-verdict='cannot judge'" in banner and "#b3261e" in banner
    assert "Verdict: CANNOT JUDGE" in banner and "#1f5f3f" not in banner  # the green of a verdict
    for reason in frame.verdict.reasons:
        assert views.escape(reason) in banner and reason in format_comparison(frame)


@pytest.mark.slow  # renders the notebook
def test_compare_html_report_carries_the_banner(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c.html"
    code, _, _ = cli(capsys, "compare", "GOOD", "DEAD", "--db", db, "--html", str(out))
    assert code == 4
    html = out.read_text()
    assert "Verdict: CANNOT JUDGE" in html and "cannot-judge" in html
    assert "Verdict: no regression" not in html


def _baseline_file(db: str, tmp_path: Path, edit) -> str:  # type: ignore[no-untyped-def]
    data = build_baseline("GOOD", db)
    edit(data)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))  # json writes NaN / Infinity literals, as a hand edit might
    return str(path)


@pytest.mark.parametrize(("edit", "field", "words"), [
    (lambda d: d["dimensions"]["overall"].update(sd=math.inf), "dimensions.overall.sd", "finite number"),
    (lambda d: d["tasks"]["x"]["dimensions"]["loop_detection"].update(mean=math.nan),
     "tasks.x.dimensions.loop_detection.mean", "finite number"),
    (lambda d: d["tasks"]["y"]["dimensions"]["overall"].update(sd=-0.1), "tasks.y.dimensions.overall.sd",
     "greater than or equal to 0"),
    (lambda d: d.pop("suite_hash"), "suite_hash", "missing required field"),
    (lambda d: d.update(format="aeh-baseline/2"), "format", "'aeh-baseline/2' is not 'aeh-baseline/1'"),
    (lambda d: d["tasks"]["x"].update(successes=-1), "tasks.x.successes", "greater than or equal to 0"),
    (lambda d: d["tasks"]["x"].update(successes=9), "tasks.x", "successes (9) exceed attempts (5)"),
], ids=["sd-infinity", "mean-nan", "sd-negative", "no-suite-hash", "format-version", "negative-count",
        "successes-over-attempts"])
def test_malformed_baseline_is_exit_2_naming_the_field(db: str, tmp_path: Path, capsys, edit, field: str,  # type: ignore[no-untyped-def]
                                                      words: str) -> None:
    path = _baseline_file(db, tmp_path, edit)
    code, out, err = cli(capsys, "gate", "--baseline", path, "--run", "GOOD2", "--db", db)
    assert code == 2 and out == ""
    line = next(ln for ln in err.splitlines() if f"{path}:{field}:" in ln)
    assert words in line and "aeh baseline save" in line
    with pytest.raises(aeh.AehError, match="is invalid"):  # a dict baseline is checked the same way
        gate(json.loads(Path(path).read_text()), "GOOD2", db)


@pytest.mark.parametrize("argv", [
    ["gate", "--threshold", "-1"], ["gate", "--threshold", "nan"], ["gate", "--threshold", "1.5"],
    ["gate", "--overall-threshold", "-0.03"],
    ["drift", "--suite", "hand", "--threshold", "-1"], ["drift", "--suite", "hand", "--dimension-threshold", "2"],
    ["drift", "--suite", "hand", "--window", "2"], ["compare", "GOOD", "GOOD2", "--fdr", "0"],
])
def test_thresholds_out_of_range_are_exit_2(db: str, tmp_path: Path, capsys, argv: list[str]) -> None:  # type: ignore[no-untyped-def]
    if argv[0] == "gate":
        base = tmp_path / "main.json"
        assert cli(capsys, "baseline", "save", "GOOD", "--out", str(base), "--db", db)[0] == 0
        argv = [*argv, "--baseline", str(base), "--run", "GOOD2"]
    code, out, err = cli(capsys, *argv, "--db", db)
    option = next(a for a in argv if a in ("--threshold", "--overall-threshold", "--dimension-threshold",
                                           "--window", "--fdr"))
    assert code == 2 and f"{option} must be" in err and "e.g." in err and "Traceback" not in err


def test_drift_over_runs_including_an_invalid_one(db: str, tmp_path: Path, build,  # type: ignore[no-untyped-def]
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with Store(db) as store:
        for i in range(4):
            build.run(store, f"R{i}", GOOD, suite_hash="h3", created_at=f"2025-02-0{i + 1}T00:00:00Z")
        build.run(store, "R-DEAD", DEAD, suite_hash="h3", created_at="2025-02-09T00:00:00Z")
    runs = [a for r in ("R0", "R1", "R2", "R-DEAD") for a in ("--run-id", r)]
    code, out, _ = cli(capsys, "drift", *runs, "--db", db)
    assert code == 4 and "CANNOT JUDGE" in out and "run R-DEAD has 100.0% harness errors" in out
    assert "no significant drift" not in out
    frame = aeh.drift(runs=["R0", "R1", "R2", "R3", "R-DEAD"], db=db)
    assert frame.status == "cannot judge" and frame.drifting is False
    assert [r.check for r in frame.cannot_judge] == ["harness_errors"]
    # a window chosen by suite leaves the invalid run out, says so, and judges the valid ones
    frame = aeh.drift("hand", db=db, window=4)
    assert list(frame["run_id"]) == ["R0", "R1", "R2", "R3"] and frame.status == "no significant drift"
    assert any("left out 1 run(s) with harness errors" in n and "R-DEAD" in n for n in frame.notes)


def test_drift_too_few_runs_lists_its_reason(db: str) -> None:
    frame = aeh.drift(runs=["GOOD", "GOOD2"], db=db)
    assert frame.status == "not enough runs to judge"
    assert [r.check for r in frame.cannot_judge] == ["too_few_runs"]


def test_drift_refuses_an_unfinished_run_unless_accepted(db: str) -> None:
    frame = aeh.drift(runs=["GOOD", "GOOD2", "HALF"], db=db)
    assert frame.status == "cannot judge"
    assert [r.check for r in frame.cannot_judge] == ["unfinished"]
    accepted = aeh.drift(runs=["GOOD", "GOOD2", "HALF"], db=db, allow_unfinished=True)
    assert accepted.status == "not enough runs to judge"  # three runs: still no trend


def test_gate_with_no_task_shared_with_the_baseline_cannot_judge(db: str, tmp_path: Path, build,  # type: ignore[no-untyped-def]
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with Store(db) as store:
        build.run(store, "ELSEWHERE", {"z": [True] * 5})  # same suite hash, none of the baseline's tasks
    base = tmp_path / "main.json"
    assert cli(capsys, "baseline", "save", "GOOD", "--out", str(base), "--db", db)[0] == 0
    code, out, _ = cli(capsys, "gate", "--baseline", str(base), "--run", "ELSEWHERE", "--db", db)
    assert code == 4 and "0 task(s) have valid attempts in both the baseline and the run" in out
    assert [r.check for r in gate(str(base), "ELSEWHERE", db).cannot_judge] == ["too_few_tasks"]


def test_cannot_judge_lists_no_task_verdict(db: str, build, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    """x was 100% in GOOD and has no verdict in DEAD: not "newly failing", not "REGRESSED"."""
    code, out, _ = cli(capsys, "compare", "GOOD", "DEAD", "--db", db)
    assert code == 4
    assert "newly failing" not in out and "REGRESSED" not in out and "improved" not in out
    assert "q (BH)" not in out and "paired delta" not in out
    assert "(counts only: no per-task verdict)" in out
    assert any(line.startswith("x ") and "5/5" in line for line in out.splitlines())
    with Store(db) as store:  # a run refused at 80% harness errors whose answered attempts failed
        build.run(store, "MOSTLY_DEAD", {"x": [None] * 4 + [False], "y": [None] * 4 + [False]},
                  created_at="2025-01-08T00:00:00Z")
    code, out, _ = cli(capsys, "compare", "GOOD", "MOSTLY_DEAD", "--db", db)
    assert code == 4 and "newly failing" not in out and "REGRESSED" not in out, out
    result = aeh.compare("GOOD", "MOSTLY_DEAD", db=db)
    assert result.newly_failing == [] and result.regressed_tasks == [] and result.improved_tasks == []
    assert not result.table["regressed"].any() and not result.table["improved"].any()
    # Control: a judged comparison where x drops from 5/5 still names it newly failing.
    with Store(db) as store:
        build.run(store, "WORSE", {"x": [True, False, False, False, False], "y": GOOD["y"]},
                  created_at="2025-01-07T00:00:00Z")
    judged = aeh.compare("GOOD", "WORSE", db=db)
    assert not judged.verdict.cannot_judge and judged.newly_failing == ["x"]
    assert "newly failing (was 100% in A): x" in format_comparison(judged)


def test_the_report_of_a_cannot_judge_comparison_lists_no_task_verdict(db: str, build) -> None:  # type: ignore[no-untyped-def]
    """The compare report's views, as `aeh compare` prints it: counts only, no newly failing task
    claimed either way, no delta chart; a judged comparison still names the task."""
    from aeh.report import tables

    refused = aeh.compare("GOOD", "DEAD", db=db)
    assert refused.verdict.cannot_judge
    failing = views.newly_failing(refused).data
    assert "Cannot judge" in failing and "No newly failing" not in failing
    assert "data-verdict='cannot judge'" in failing
    for table in (tables.compare_table(refused).data, views.compare_table(refused).data):
        assert 'id="compare-table"' in table and "Counts only" in table
        assert "5/5" in table  # x in GOOD
        for word in ("REGRESSED", "improved", "q (BH)", "delta [", "SUITE (paired)", "no change", ">p<"):
            assert word not in table, word
    assert views.forest_plot(refused) is None
    with Store(db) as store:
        build.run(store, "WORSE", {"x": [True, False, False, False, False], "y": GOOD["y"]},
                  created_at="2025-01-07T00:00:00Z")
    judged = aeh.compare("GOOD", "WORSE", db=db)
    assert not judged.verdict.cannot_judge
    assert "Newly failing" in views.newly_failing(judged).data and "<li>x:" in views.newly_failing(judged).data
    assert "q (BH)" in tables.compare_table(judged).data and "Counts only" not in tables.compare_table(judged).data


@pytest.mark.slow
def test_compare_html_of_a_cannot_judge_comparison_claims_no_task(db: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`aeh compare --html` end to end (the shipped notebook, papermill, nbconvert)."""
    out = tmp_path / "cmp.html"
    code, printed, _ = cli(capsys, "compare", "GOOD", "DEAD", "--db", db, "--html", str(out))
    assert code == 4 and f"report written to {out}" in printed
    body = out.read_text()
    body = body[body.index("<main>"):]
    assert re.search(r"data-verdict=.cannot judge", body) and "Cannot judge</b>: these runs" in body
    assert "No newly failing" not in body and "REGRESSED" not in body and "q (BH)" not in body
    assert "Counts only" in body and 'src="data:image/png;base64,' not in body  # no delta chart
