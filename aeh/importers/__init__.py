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

from aeh._util.lazy import lazy_exports as _lazy_exports
from aeh.importers._null_policy import NULL_OUTCOMES, NullPolicy
from aeh.importers._registry import Importer, importers

if _typing.TYPE_CHECKING:
    # one unwrapped line a module, so these imports read as the `_NAMES` table below does
    # isort: off
    from aeh.importers._common import new_run_id, run_info, write_run
    from aeh.importers._hidden_sets import hidden_set_lines
    from aeh.importers._inspect import import_inspect_logs
    from aeh.importers._otel import export_otlp_json, import_otel_files, otlp_to_trajectories, run_to_otlp
    from aeh.importers._otel_live import serve_otlp
    from aeh.importers._otel_send import send_otlp
    from aeh.importers._registry import add_scoring_argument, add_trajectory_arguments
    from aeh.importers._run_card import attempt_card, verdict_of, write_attempt_card, write_run_cards
    from aeh.importers._tau_bench import import_tau_bench
    from aeh.importers._terminal_bench import agent_from_submission, discover_results, import_terminal_bench
    from aeh.importers._terminal_bench import model_from_submission
    from aeh.importers._trajectory import grade_trajectories, grade_trajectories_async, import_trajectory_files
    # isort: on

# Names not imported above load on first use (the store brings polars), so `aeh import --help` stays fast
_NAMES: dict[str, tuple[str, ...]] = {
    "aeh.importers._null_policy": ("NULL_OUTCOMES", "NullPolicy"),
    "aeh.importers._registry": ("Importer", "importers", "add_scoring_argument", "add_trajectory_arguments"),
    "aeh.importers._common": ("new_run_id", "run_info", "write_run"),
    "aeh.importers._hidden_sets": ("hidden_set_lines",),
    "aeh.importers._inspect": ("import_inspect_logs",),
    "aeh.importers._otel": ("export_otlp_json", "import_otel_files", "otlp_to_trajectories", "run_to_otlp"),
    "aeh.importers._otel_live": ("serve_otlp",),
    "aeh.importers._otel_send": ("send_otlp",),
    "aeh.importers._run_card": ("attempt_card", "verdict_of", "write_attempt_card", "write_run_cards"),
    "aeh.importers._tau_bench": ("import_tau_bench",),
    "aeh.importers._terminal_bench": ("agent_from_submission", "discover_results", "import_terminal_bench",
                                      "model_from_submission"),
    "aeh.importers._trajectory": ("grade_trajectories", "grade_trajectories_async", "import_trajectory_files"),
}

__getattr__, __all__ = _lazy_exports(__name__, _NAMES)
