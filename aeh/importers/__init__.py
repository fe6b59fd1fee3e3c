"""Importers: turn other harnesses' recorded runs into stored aeh runs.

    import aeh.importers as imp
    rid = imp.import_tau_bench("gpt-4o-airline.json", db="runs.db")
    rid = imp.import_terminal_bench(["sub/run_1", "sub/run_2"], db="runs.db")   # or the submission folder
    rid = imp.import_terminal_bench(["sub"], null_as="harness_error:test_timeout")

Each importer writes ONE run (all attempts in one transaction) and returns its id, so every
analysis function (`aeh.load_run`, `aeh.pass_k`, `aeh.compare` …) works on the imported data.
"""

from aeh.importers._null_policy import NULL_OUTCOMES, NullPolicy
from aeh.importers._tau_bench import import_tau_bench
from aeh.importers._terminal_bench import (
                                           agent_from_submission,
                                           discover_results,
                                           import_terminal_bench,
                                           model_from_submission,
)

__all__ = ["NULL_OUTCOMES", "NullPolicy", "agent_from_submission", "discover_results", "import_tau_bench",
           "import_terminal_bench", "model_from_submission"]
