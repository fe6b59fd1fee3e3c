"""Scoring profiles: which definition scores each trajectory dimension.

`aeh` (the default) scores every dimension with the registered scorers (`default_scorers`).
`trajectory-harness` scores the six deterministic ones as agent-eval-harness defines them
(`aeh.grading._harness_scorers`), so a run imported from that harness reproduces the figures its
CI printed. A run records the profile it was scored with (`config.scoring`), a baseline the one
it was saved with (`scoring`), and the gate scores the run it judges with the baseline's.

Third-party profiles arrive through the `aeh.scoring_profiles` entry-point group: an entry
point names a `ScoringProfile`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from aeh._util.registry import Registry
from aeh.errors import ConfigError
from aeh.grading.scorers import ScorerFn

__all__ = ["AEH_PROFILE", "BUILTIN_PROFILES", "DEFAULT_PROFILE", "SCORING_HELP", "TRAJECTORY_HARNESS",
           "ScoringProfile", "scoring_profile", "scoring_profiles"]


@dataclass(frozen=True)
class ScoringProfile:
    """A named set of scorers that replace the registered ones for the dimensions they name."""

    name: str
    summary: str
    scorers: Mapping[str, ScorerFn] = field(default_factory=dict)
    reads_spans: bool = False
    """The scorers read the attempt's spans (`ScoreInput.spans`): they are loaded for them."""


DEFAULT_PROFILE = "aeh"
SCORING_HELP = ("scoring profile: aeh (aeh's own definitions) or trajectory-harness (agent-eval-harness's "
                "error_recovery, loop_detection … as that harness computes them)")

AEH_PROFILE = ScoringProfile(DEFAULT_PROFILE, "aeh's own definitions of every dimension (docs/trajectory.md)")


def _trajectory_harness() -> ScoringProfile:
    # loaded on first use: only the trajectory-harness profile needs its scorers
    from aeh.grading._harness_scorers import HARNESS_SCORERS

    return ScoringProfile("trajectory-harness", "agent-eval-harness's definitions of the six deterministic "
                          "dimensions (docs/agent-eval-harness.md)", HARNESS_SCORERS, reads_spans=True)


TRAJECTORY_HARNESS = _trajectory_harness()

#: The shipped profiles: name → "module:object".
BUILTIN_PROFILES = {
    DEFAULT_PROFILE: "aeh.grading._profiles:AEH_PROFILE",
    "trajectory-harness": "aeh.grading._profiles:TRAJECTORY_HARNESS",
}

scoring_profiles: Registry[ScoringProfile] = Registry("scoring profile", group="aeh.scoring_profiles",
                                                      builtins=BUILTIN_PROFILES)


def scoring_profile(name: str | None) -> ScoringProfile:
    """The profile called `name` (None: aeh's own); ConfigError naming the known ones."""
    name = name or DEFAULT_PROFILE
    if name not in scoring_profiles:
        raise ConfigError(f"no scoring profile {name!r} — use one of {', '.join(scoring_profiles.names())} "
                          "(e.g. --scoring trajectory-harness)")
    return scoring_profiles.get(name)
