"""Suites: the plugin contract, the loader (directories and the suite registry / `aeh.suites`)."""

import typing as _typing

from aeh._util.lazy import lazy_getattr as _lazy_getattr
from aeh.models import Invariant, InvariantVerdict
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import DirectorySuite, load_suite, suite_hash, suites, validate_suite

if _typing.TYPE_CHECKING:
    from aeh.suite._coding import CodingSuite, check_contract
    from aeh.suite._locate import reload_run_suite, suite_location

# loaded on first use: what other packages take from here, kept off this package's import
_LAZY = {
    "CodingSuite": "aeh.suite._coding",
    "check_contract": "aeh.suite._coding",
    "reload_run_suite": "aeh.suite._locate",
    "suite_location": "aeh.suite._locate",
}


__getattr__ = _lazy_getattr(__name__, _LAZY)


__all__ = [
    "CodingSuite",
    "DirectorySuite",
    "EvalSuite",
    "Invariant",
    "InvariantVerdict",
    "check_contract",
    "load_suite",
    "reload_run_suite",
    "suite_hash",
    "suite_location",
    "suites",
    "validate_suite",
]
