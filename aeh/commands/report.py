"""`aeh report --run-id ID --out report.html`: the stored run's notebook as one self-contained HTML file."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from aeh._util.blas_threads import one_blas_thread
from aeh._util.gc_pause import cyclic_gc_paused
from aeh.errors import ExitCode, RunNotFoundError

NAME = "report"
HELP = "render a stored run's report (papermill + nbconvert) to one self-contained HTML file; no agent re-runs"


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("--run-id", help="run id or unique prefix (default: the newest run in the store)")
    parser.add_argument("--out", help="HTML file to write (default: reports/report-RUN_ID.html)")
    parser.add_argument("--keep-ipynb", action="store_true", help="also keep the executed notebook next to the HTML")
    parser.add_argument("--kernel", help="where the notebook runs: `inprocess` (default; $AEH_REPORT_KERNEL overrides) "
                                         "or a Jupyter kernel name such as `python3` for a separate kernel process")
    parser.add_argument("--suite", help="the suite the run measured, when it is no longer at the location the run "
                                        "stored (its hash is checked); used to score a run that has no stored scores")
    add_db(parser)


def main(args: argparse.Namespace) -> int:
    one_blas_thread()  # before numpy loads: its BLAS thread would only spin (aeh._util.blas_threads)
    # One report's imports and pages are a bounded burst: without the collector re-walking every
    # imported object (aeh._util.gc_pause) the report costs ~13 % less CPU.
    with cyclic_gc_paused():
        return _report(args)


def _report(args: argparse.Namespace) -> int:
    # heavy: loaded on first use
    from aeh.report import import_lean, lean_render, render_run_report
    from aeh.store import open_store

    import_lean()  # this process renders one report and exits: skip papermill's unused extras

    with open_store(args.db, must_exist=True) as store:
        run_id = args.run_id or store.latest_run_id()
        if run_id is None:
            raise RunNotFoundError("(newest)", store.path)
        info = store.run_info(run_id)
        unscored = not store.has_dimension_scores(info.run_id)
    if unscored or args.suite is not None:
        # Scored here, with the suite found again and its hash checked, so the notebook reads
        # stored scores and never scores without the suite.
        from aeh.analysis import score_run

        score_run(info.run_id, args.db, suite=args.suite, write=unscored)
    print(f"run {info.run_id}: suite {info.suite}, adapter {info.adapter}, model {info.model or '-'}, "
          f"{info.attempts} attempts/task, seed {info.seed}, {info.status}")
    print(f"price table {info.price_table_version} ({info.price_table_date})")
    with lean_render():  # numpy's packages scipy.special touches: imported lazily
        out = render_run_report(info.run_id, args.out, db=args.db, keep_ipynb=args.keep_ipynb, kernel=args.kernel)
    print(f"report written to {out}")
    return ExitCode.OK
