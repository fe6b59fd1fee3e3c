"""Importers: turn other harnesses' recorded runs into stored aeh runs.

    import aeh.importers as imp
    rid = imp.import_tau_bench("gpt-4o-airline.json", db="runs.db")
    rid = imp.import_terminal_bench(["sub/run_1", "sub/run_2"], db="runs.db")   # or the submission folder
    rid = imp.import_terminal_bench(["sub"], null_as="harness_error:test_timeout")
    rid = imp.import_inspect_logs(["logs/2025-01-01_task_abc.eval"], scorer="match")  # the inspect extra

Each importer writes ONE run (all attempts in one transaction) and returns its id, so every
analysis function (`aeh.load_run`, `aeh.pass_k`, `aeh.compare` …) works on the imported data.
"""

import typing as _typing

from aeh._util.lazy import lazy_getattr as _lazy_getattr
from aeh.importers._null_policy import NULL_OUTCOMES, NullPolicy
from aeh.importers._registry import Importer, importers

if _typing.TYPE_CHECKING:
    from aeh.importers._common import new_run_id, run_info, write_run
    from aeh.importers._hidden_sets import hidden_set_lines
    from aeh.importers._inspect import import_inspect_logs
    from aeh.importers._otel import export_otlp_json, import_otel_files, otlp_to_trajectories, run_to_otlp
    from aeh.importers._otel_live import serve_otlp
    from aeh.importers._otel_send import send_otlp
    from aeh.importers._registry import add_scoring_argument, add_trajectory_arguments
    from aeh.importers._run_card import attempt_card, verdict_of, write_attempt_card, write_run_cards
    from aeh.importers._tau_bench import import_tau_bench
    from aeh.importers._terminal_bench import (
        agent_from_submission,
        discover_results,
        import_terminal_bench,
        model_from_submission,
    )
    from aeh.importers._trajectory import grade_trajectories, grade_trajectories_async, import_trajectory_files

# heavy: loaded on first use (the store brings polars), so `aeh import --help` stays fast
_LAZY = {
    "send_otlp": "aeh.importers._otel_send",
    "serve_otlp": "aeh.importers._otel_live",
    "add_scoring_argument": "aeh.importers._registry",
    "add_trajectory_arguments": "aeh.importers._registry",
    "attempt_card": "aeh.importers._run_card",
    "hidden_set_lines": "aeh.importers._hidden_sets",
    "write_run_cards": "aeh.importers._run_card",
    "write_attempt_card": "aeh.importers._run_card",
    "verdict_of": "aeh.importers._run_card",
    "grade_trajectories_async": "aeh.importers._trajectory",
    "new_run_id": "aeh.importers._common",
    "run_info": "aeh.importers._common",
    "write_run": "aeh.importers._common",
    "import_tau_bench": "aeh.importers._tau_bench",
    "import_inspect_logs": "aeh.importers._inspect",
    "export_otlp_json": "aeh.importers._otel",
    "import_otel_files": "aeh.importers._otel",
    "otlp_to_trajectories": "aeh.importers._otel",
    "run_to_otlp": "aeh.importers._otel",
    "grade_trajectories": "aeh.importers._trajectory",
    "import_trajectory_files": "aeh.importers._trajectory",
    "agent_from_submission": "aeh.importers._terminal_bench",
    "discover_results": "aeh.importers._terminal_bench",
    "import_terminal_bench": "aeh.importers._terminal_bench",
    "model_from_submission": "aeh.importers._terminal_bench",
}


__getattr__ = _lazy_getattr(__name__, _LAZY)


__all__ = [
    "NULL_OUTCOMES",
    "Importer",
    "NullPolicy",
    "add_scoring_argument",
    "add_trajectory_arguments",
    "agent_from_submission",
    "attempt_card",
    "discover_results",
    "export_otlp_json",
    "hidden_set_lines",
    "grade_trajectories",
    "grade_trajectories_async",
    "import_inspect_logs",
    "import_otel_files",
    "import_tau_bench",
    "import_terminal_bench",
    "import_trajectory_files",
    "importers",
    "model_from_submission",
    "new_run_id",
    "otlp_to_trajectories",
    "run_info",
    "run_to_otlp",
    "send_otlp",
    "serve_otlp",
    "verdict_of",
    "write_attempt_card",
    "write_run",
    "write_run_cards",
]
