"""Grading: tier-0 outcome graders, tier-1 invariants and failure classification.

The built-in grader kinds are listed in `BUILTIN_GRADERS` and imported on first use; plugins add
theirs through the `aeh.graders` entry-point group.
"""

import typing as _typing

# one unwrapped line a module, so these imports read as the `_NAMES` table below does
# isort: off
from aeh._util.lazy import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from aeh.grading._registry import BUILTIN_GRADERS, GradeContext, GraderConfig, GraderRegistry, default_graders
    from aeh.grading._registry import grader
    from aeh.grading.classify import classify_failure, unrecovered_tool_errors
    from aeh.grading.invariants import SHIPPED_INVARIANTS, check_invariants, default_invariants, invariant
    from aeh.grading.invariants import registered_invariants
    from aeh.grading.outcome import extract_last_number
    from aeh.grading.scorers import default_scorers
    from aeh.grading._hidden_tests import HIDDEN_PATTERNS, build_grading_dir, hidden_like_files, hidden_sha256
    from aeh.grading._hidden_tests import run_tests, tree_digests
    from aeh.grading._jail import CONFINED, Jail, jail_for, no_jail_message, no_jail_reason, probe_jail
    from aeh.grading._jail import repository_dirs, unconfined_lines
    from aeh.grading._preflight import preflight_problems, require_confinement, require_preflight
    from aeh.grading._profiles import DEFAULT_PROFILE, SCORING_HELP, ScoringProfile, scoring_profile, scoring_profiles
    from aeh.grading._sandbox import Sandbox, probe_sandbox, sandbox_for
    # isort: on

# Every name loads on first use: what other packages take from here, kept off this package's import (a
# report reads stored grades without the graders, their pattern engine or the invariants).
_NAMES: dict[str, tuple[str, ...]] = {
    "aeh.grading._registry": ("BUILTIN_GRADERS", "GradeContext", "GraderConfig", "GraderRegistry", "default_graders",
                              "grader"),
    "aeh.grading.classify": ("classify_failure", "unrecovered_tool_errors"),
    "aeh.grading.invariants": ("SHIPPED_INVARIANTS", "check_invariants", "default_invariants", "invariant",
                               "registered_invariants"),
    "aeh.grading.outcome": ("extract_last_number",),
    "aeh.grading.scorers": ("default_scorers",),
    "aeh.grading._hidden_tests": ("HIDDEN_PATTERNS", "build_grading_dir", "hidden_like_files", "hidden_sha256",
                                  "run_tests", "tree_digests"),
    "aeh.grading._jail": ("CONFINED", "Jail", "jail_for", "no_jail_message", "no_jail_reason", "probe_jail",
                          "repository_dirs", "unconfined_lines"),
    "aeh.grading._preflight": ("preflight_problems", "require_confinement", "require_preflight"),
    "aeh.grading._profiles": ("DEFAULT_PROFILE", "SCORING_HELP", "ScoringProfile", "scoring_profile",
                              "scoring_profiles"),
    "aeh.grading._sandbox": ("Sandbox", "probe_sandbox", "sandbox_for"),
}

__getattr__, __all__ = _lazy_exports(__name__, _NAMES)
