"""What the notebooks show for coding runs: public vs hidden per task, and the solver matrix."""

from __future__ import annotations

import json
from html import escape
from typing import Any

import pandas as pd

from aeh._util.figure import figure, money
from aeh.analysis import MatrixResult
from aeh.grading import unconfined_lines
from aeh.importers import hidden_set_lines
from aeh.models import RunInfo
from aeh.report._expect import expect
from aeh.store import StoreLike, open_store

__all__ = ["coding_runs", "is_coding_run", "matrix_chart", "matrix_html", "public_hidden_frame",
           "public_hidden_section", "run_card_html"]


def is_coding_run(run: RunInfo) -> bool:
    return run.config.suite_kind == "coding_fixtures"


def coding_runs(db: StoreLike) -> list[str]:
    """The newest finished coding run of each solver label in the store (newest first)."""

    chosen: dict[str, str] = {}
    with open_store(db, must_exist=True) as store:
        for info in store.runs():  # newest first
            if not is_coding_run(info) or info.status != "finished":
                continue
            chosen.setdefault(str(info.config.facts.get("solver_label") or info.model), info.run_id)
    return list(chosen.values())


def public_hidden_frame(run_id: str, db: StoreLike = None) -> pd.DataFrame:
    """Per task: attempts, solved, share of attempts green on all public / all hidden tests,
    mean public and hidden tests passed, tamper suspects, and the hidden tests failed most often."""

    with open_store(db, must_exist=True) as store:
        graders = store.grader_frame(run_id).to_pandas()
    graders = graders[graders["kind"] == "hidden_tests"]
    rows = []
    for task_id, group in graders.groupby("task_id", sort=True):
        ev = [json.loads(e or "{}") for e in group["evidence"]]
        n = len(ev)
        failing: dict[str, int] = {}
        for e in ev:
            for name in e.get("failing", []):
                if name.startswith("tests_hidden"):
                    short = name.split("::")[-1]
                    failing[short] = failing.get(short, 0) + 1
        top = sorted(failing.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        rows.append({
            "task": task_id, "n": n, "solved": int(group["passed"].fillna(False).astype(bool).sum()),
            "public_all": sum(bool(e.get("public_total")) and e.get("public_passed") == e.get("public_total")
                              for e in ev) / n,
            "hidden_all": sum(bool(e.get("hidden_total")) and e.get("hidden_passed") == e.get("hidden_total")
                              for e in ev) / n,
            "public_tests": f"{sum(e.get('public_passed', 0) for e in ev) / n:.1f}/{ev[0].get('public_total', 0)}",
            "hidden_tests": f"{sum(e.get('hidden_passed', 0) for e in ev) / n:.1f}/{ev[0].get('hidden_total', 0)}",
            "tamper_suspect": sum(bool(e.get("tamper_suspect")) for e in ev),
            "hidden_failed_most": ", ".join(f"{k} ×{v}" for k, v in top),
        })
    return pd.DataFrame(rows)


def public_hidden_section(run_id: str, run: RunInfo, db: StoreLike = None) -> Any:
    """HTML: the run's grading facts and the per-task public-vs-hidden table."""
    from IPython.display import HTML

    cfg = run.config.facts  # the coding suite's and the command adapter's
    frame = public_hidden_frame(run_id, db)
    mode = cfg.get("grading_sandbox", "?")
    warn = "" if mode == "unshare" else " <b>(graded code had the network)</b>"
    head = (f"<h2>Public vs hidden tests per task</h2><p>Solver <b>{escape(str(cfg.get('solver_label')))}</b> "
            f"({escape(str(cfg.get('solver_role', 'solver')))}). Graded in a clean directory: the fixture's seed, "
            "only the agent's entry files, and the fixture's own public and hidden tests. "
            f"Grading sandbox: <code>{escape(str(mode))}</code>{warn}. "
            + "; ".join(escape(line) for line in hidden_set_lines(cfg)) + ".</p>"
            + "".join(f"<p><b>{escape(line)}</b></p>" for line in unconfined_lines(cfg))
            + "<p>A valid fixture passes its public tests before the agent starts, so <i>public all</i> is not "
            "evidence of a fix; <i>solved</i> needs every public and hidden test green.</p>")
    shown = frame.copy()
    for col in ("public_all", "hidden_all"):
        shown[col] = shown[col].map(lambda v: f"{v:.2f}")
    page = head + shown.to_html(index=False, border=0, classes="coding-public-hidden", escape=True)
    return HTML(page + run_card_html(run_id, db))  # type: ignore[no-untyped-call]  # IPython.display is unannotated


def _tests(card: dict[str, Any], which: str) -> str:
    counts = card["tests"][which]
    return "—" if counts["total"] is None else f"{counts['passed']}/{counts['total']}"


def run_card_html(run_id: str, db: StoreLike = None) -> str:
    """Every attempt as `aeh export run-card` writes it: verdict, public and hidden tests, the
    hidden set's SHA-256 and the command that reproduces the attempt."""
    # heavy: loaded on first use (the importers bring their formats)
    from aeh.importers import attempt_card

    with open_store(db, must_exist=True) as store:
        info = store.run_info(store.resolve_run_id(run_id))
        keys = sorted(store.attempts_frame(info.run_id, columns=["task_id", "attempt"]).rows())
        cards = [attempt_card(info, store.attempt_record(info.run_id, str(t), int(n))) for t, n in keys]
    rows = []
    for card in cards:
        failing = ", ".join(card["tests"]["failing"][:3]) + (" …" if len(card["tests"]["failing"]) > 3 else "")
        rows.append(
            f"<tr class='verdict-{escape(card['verdict'].lower())}'><td>{escape(card['task_id'])}</td>"
            f"<td>{card['attempt']}</td><td><b>{escape(card['verdict'])}</b></td>"
            f"<td>{escape(_tests(card, 'public'))}</td><td>{escape(_tests(card, 'hidden'))}</td>"
            f"<td>{escape(failing) or '—'}</td><td><code>{escape(str(card['hidden_sha256'] or '—'))}</code></td>"
            f"<td><code>{escape(card['reproduce'])}</code></td></tr>")
    head = ("<tr><th>task</th><th>#</th><th>verdict</th><th>public</th><th>hidden</th><th>failing</th>"
            "<th>hidden set SHA-256</th><th>reproduce</th></tr>")
    return ("<h3>Run card</h3><p>One row per attempt, as <code>aeh export run-card RUN --out DIR</code> writes it "
            "(<code>results.json</code>, <code>run_card.md</code>). <b>SOLVED</b>: every public and hidden test "
            "passed; <b>PARTIAL</b>: every public test passed, a hidden one failed; <b>FAILED</b>; "
            "<b>HARNESS_ERROR</b>. <i>public</i> and <i>hidden</i> are tests passed / tests run; the command "
            "runs the attempt again as the last attempt of a new run (attempt seeds depend only on the run seed, "
            "the task and the attempt number).</p>"
            f"<table id='run-card' class='coding-run-card'>{head}{''.join(rows)}</table>")



def matrix_html(result: MatrixResult) -> Any:
    from IPython.display import HTML

    expect(result, MatrixResult)
    df = result.table
    rows = []
    for r in df.itertuples(index=False):
        rows.append({
            "solver": r.label, "role": r.role, "k/n": f"{r.solved}/{r.n}",
            "solve rate (Wilson 95%)": f"{figure(r.solve_rate, '{:.2f}')} [{figure(r.solve_low, '{:.2f}')}, "
                                       f"{figure(r.solve_high, '{:.2f}')}]",
            "public": figure(r.public_rate, "{:.2f}"), "hidden": figure(r.hidden_rate, "{:.2f}"),
            "hidden gap": figure(r.hidden_gap, "{:+.2f}"), "floor gap": figure(r.floor_gap, "{:+.2f}"),
            "vs floor": figure(r.above_floor, "{:+.2f}"), "below ceiling": figure(r.below_ceiling, "{:+.2f}"),
            "p50 s": figure(r.latency_p50_s, "{:.2f}"), "cost/solved": money(r.cost_per_solved_usd, r.cost_currency),
            "tamper": r.tamper_suspects,
        })
    warnings = "".join(f"<div class='aeh-banner warn'>⚠ {escape(w)}</div>" for w in result.warnings)
    page = warnings + pd.DataFrame(rows).to_html(index=False, border=0, classes="coding-matrix")
    return HTML(page)  # type: ignore[no-untyped-call]  # IPython.display is unannotated


def matrix_chart(result: MatrixResult) -> Any:
    """Solve rate per solver with its Wilson interval; the floor as a dashed line."""
    import matplotlib.pyplot as plt

    expect(result, MatrixResult)
    df = result.table
    fig, ax = plt.subplots(figsize=(7, 0.6 * max(2, len(df)) + 1))
    labels = list(df["label"])[::-1]
    rates = list(df["solve_rate"])[::-1]
    lows = [r - lo for r, lo in zip(rates, list(df["solve_low"])[::-1], strict=True)]
    highs = [hi - r for r, hi in zip(rates, list(df["solve_high"])[::-1], strict=True)]
    ax.errorbar(rates, range(len(labels)), xerr=[lows, highs], fmt="o", capsize=4)
    ax.set_yticks(range(len(labels)), labels)
    floor = df[df["role"] == "floor"]
    if len(floor):
        ax.axvline(float(floor["solve_rate"].iloc[0]), ls="--", color="grey", label="noop floor")
        ax.legend(loc="lower right")
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("solve rate (all public and hidden tests pass), Wilson 95%")
    ax.set_title("Solvers on the same fixtures")
    return fig
