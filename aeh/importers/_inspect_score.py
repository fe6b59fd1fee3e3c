"""Which Inspect scorer decides success, and how its value becomes a pass or a fail.

An Inspect sample carries one `Score` per scorer. The import takes ONE scorer's value: the only
scorer of the log by default, or the one named (`--scorer NAME`); several without a name are
refused with the list, since picking one silently would change what the run measures.

A value becomes a number the way Inspect's own `value_to_float` reads it, then success is
`number >= threshold` (default 1.0: only full credit passes):

| value | number |
| --- | --- |
| `"C"` (CORRECT) · `"I"` (INCORRECT) · `"P"` (PARTIAL) · `"N"` (NOANSWER) | 1 · 0 · 0.5 · 0 |
| `true` / `false`, `"yes"` / `"no"`, `"true"` / `"false"` | 1 / 0 |
| a number, or a string holding one | itself |

So PARTIAL fails unless `--success-threshold 0.5`; a 0–10 model-graded score needs its own
threshold (`--success-threshold 7`). A list or dict value, or any other string, is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from aeh.errors import Problem, ValidationError

__all__ = ["LETTERS", "ScorePolicy", "choose_scorer", "score_number", "scorer_names"]

#: Inspect's score letters (`inspect_ai.scorer` CORRECT, INCORRECT, PARTIAL, NOANSWER) as numbers.
LETTERS: dict[str, float] = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_WORDS: dict[str, float] = {"yes": 1.0, "no": 0.0, "true": 1.0, "false": 0.0}
_WHAT = "Inspect log"


class ScorePolicy(BaseModel):
    """The scorer whose value decides success, and the threshold it must reach."""

    model_config = ConfigDict(frozen=True)

    scorer: str
    """The Inspect scorer's name (a key of `sample.scores`)."""
    threshold: float = 1.0
    """Success is `value >= threshold`, the value read as a number (see the module docstring)."""

    def passed(self, number: float) -> bool:
        """Whether a score's number counts as a success."""
        return number >= self.threshold

    def describe(self) -> str:
        """One line for the run's metadata and the import's summary line."""
        return (f"success = scorer {self.scorer!r} >= {self.threshold:g} (C=1, P=0.5, I=N=0, true/yes=1, "
                "numbers as they are); sample errors and unscored samples are harness errors (outside n)")


def choose_scorer(available: Sequence[str], wanted: str | None, where: str) -> str:
    """The scorer to read: `wanted` when the log has it, else the log's only scorer.

    Raises ValidationError naming the scorers when `wanted` is missing, or when the log has
    several and none was named (ambiguous), or none at all.
    """
    names = ", ".join(available) or "none"
    if wanted is not None:
        if wanted in available:
            return wanted
        raise ValidationError([Problem(where, "--scorer", f"no scorer {wanted!r} in the log (scorers: {names})",
                                       "pass one of the log's scorers with --scorer NAME")], _WHAT)
    if len(available) == 1:
        return available[0]
    if not available:
        raise ValidationError([Problem(where, "scores", "no sample has a score",
                                       "score the log first (inspect score LOG), then import it")], _WHAT)
    raise ValidationError([Problem(where, "scores", f"{len(available)} scorers, so success is ambiguous: {names}",
                                   "choose the one that decides success with --scorer NAME")], _WHAT)


def score_number(value: object) -> float | None:
    """The number an Inspect score value stands for, or None when it is not a single value."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text in LETTERS:
        return LETTERS[text]
    if text.lower() in _WORDS:
        return _WORDS[text.lower()]
    try:
        return float(text)
    except ValueError:
        return None


def scorer_names(per_sample: Iterable[Iterable[str]], declared: Sequence[str]) -> list[str]:
    """The log's scorers: those it declares, in order, then any other a sample was scored by."""
    seen = list(dict.fromkeys(declared))
    for names in per_sample:
        seen.extend(n for n in names if n not in seen)
    return seen
