"""Suites: the plugin contract, the loader (directories and the suite registry / `aeh.suites`)."""

from aeh.models import Invariant, InvariantVerdict
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import DirectorySuite, load_suite, suite_hash, suites, validate_suite

__all__ = ["DirectorySuite", "EvalSuite", "Invariant", "InvariantVerdict", "load_suite", "suite_hash", "suites",
           "validate_suite"]
