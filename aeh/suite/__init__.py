"""Suites: the plugin contract, the loader (directories and the suite registry / `aeh.suites`)."""

import typing as _typing

from aeh._util.lazy import lazy_exports as _lazy_exports
from aeh.models import Invariant, InvariantVerdict
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import DirectorySuite, load_suite, suite_hash, suites, validate_suite

if _typing.TYPE_CHECKING:
    # one unwrapped line a module, so these imports read as the `_NAMES` table below does
    # isort: off
    from aeh.suite._coding import CodingSuite, check_contract
    from aeh.suite._locate import reload_run_suite, suite_location
    # isort: on

# Names not imported above load on first use: what other packages take from here, kept off this package's
# import.
_NAMES: dict[str, tuple[str, ...]] = {
    "aeh.models": ("Invariant", "InvariantVerdict"),
    "aeh.suite.contract": ("EvalSuite",),
    "aeh.suite.loader": ("DirectorySuite", "load_suite", "suite_hash", "suites", "validate_suite"),
    "aeh.suite._coding": ("CodingSuite", "check_contract"),
    "aeh.suite._locate": ("reload_run_suite", "suite_location"),
}

__getattr__, __all__ = _lazy_exports(__name__, _NAMES)
