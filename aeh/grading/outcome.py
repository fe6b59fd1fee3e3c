"""Tier-0 outcome graders: exact, contains, numeric, regex, tool_sequence, declined.

Each kind is a small function under `@grader(kind, config=...)`. Its config model validates the
task's options at load time, so a misspelled option or a bad regex fails before any run starts.
Every grader returns evidence of what it compared, and never crashes on a missing output.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from pydantic import AliasChoices, Field, field_validator, model_validator

from aeh._util.lazy import lazy_module
from aeh.grading._registry import GradeContext, GraderConfig, result_name
from aeh.models import GraderResult

if TYPE_CHECKING:
    import regex as regex_engine  # `re` cannot stop a runaway match; `regex` takes a timeout
else:
    regex_engine = lazy_module("regex")  # heavy: only a `regex` grader's pattern uses it

__all__ = [
    "ContainsConfig",
    "DeclinedConfig",
    "ExactConfig",
    "NumericConfig",
    "RegexConfig",
    "ToolSequenceConfig",
    "extract_last_number",
]

_EVIDENCE_CHARS = 500  # enough to see what was graded without storing a whole essay twice

# A number as people write it: optional sign (not glued to a word, so "5-3" is 5 and 3, and a
# date's "-05" is not negative), optional $, thousands commas, decimals, exponent.
_NUMBER = re.compile(
    r"(?P<sign>(?<![\w.])-)?(?:\$(?P<sign2>-)?)?"
    r"(?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+)"
)


def extract_last_number(text: str | None) -> float | None:
    """The last number in `text` ("Total: $-1,234.50" → -1234.5), or None if there is none."""
    if not text:
        return None
    matches = list(_NUMBER.finditer(text))
    if not matches:
        return None
    m = matches[-1]
    value = float(m.group("num").replace(",", ""))
    return -value if (m.group("sign") or m.group("sign2")) else value


def _shown(output: str | None) -> str | None:
    return None if output is None else output[:_EVIDENCE_CHARS]


def _result(kind: str, cfg: GraderConfig, passed: bool, **evidence: Any) -> GraderResult:
    return GraderResult(tier=0, kind=kind, name=result_name(kind, cfg), passed=passed, evidence=evidence)


def _no_output(kind: str, cfg: GraderConfig, **evidence: Any) -> GraderResult:
    return _result(kind, cfg, False, output=None, reason="the agent gave no final output", **evidence)


# --- exact -------------------------------------------------------------------------------


class ExactConfig(GraderConfig):
    expected: str
    """The whole answer, compared after optional stripping and case folding."""
    case_sensitive: bool = False
    strip: bool = True


def exact(cfg: ExactConfig, ctx: GradeContext) -> GraderResult:
    out = ctx.trace.final_output
    if out is None:
        return _no_output("exact", cfg, expected=cfg.expected)
    got, want = (out.strip(), cfg.expected.strip()) if cfg.strip else (out, cfg.expected)
    if not cfg.case_sensitive:
        got, want = got.casefold(), want.casefold()
    return _result("exact", cfg, got == want, expected=cfg.expected, output=_shown(out))


# --- contains ----------------------------------------------------------------------------


class ContainsConfig(GraderConfig):
    substring: str | None = Field(None, validation_alias=AliasChoices("substring", "expected"))
    """One substring that must appear (`expected:` is accepted too)."""
    all_of: list[str] = Field(default_factory=list)
    """Every one of these must appear."""
    any_of: list[str] = Field(default_factory=list)
    """At least one of these must appear."""
    case_sensitive: bool = False

    @model_validator(mode="after")
    def _needs_something(self) -> ContainsConfig:
        if self.substring is None and not self.all_of and not self.any_of:
            raise ValueError("give `substring`, `all_of` or `any_of`")
        return self


def contains(cfg: ContainsConfig, ctx: GradeContext) -> GraderResult:
    out = ctx.trace.final_output
    wanted_all = ([cfg.substring] if cfg.substring is not None else []) + cfg.all_of
    if out is None:
        return _no_output("contains", cfg, all_of=wanted_all, any_of=cfg.any_of)
    fold = (lambda s: s) if cfg.case_sensitive else str.casefold
    hay = fold(out)
    missing = [s for s in wanted_all if fold(s) not in hay]
    found_any = [s for s in cfg.any_of if fold(s) in hay]
    passed = not missing and (not cfg.any_of or bool(found_any))
    return _result(
        "contains", cfg, passed, all_of=wanted_all, missing=missing,
        any_of=cfg.any_of, found_any=found_any, output=_shown(out),
    )


# --- numeric -----------------------------------------------------------------------------


class NumericConfig(GraderConfig):
    expected: float
    abs_tol: float = Field(1e-9, ge=0)
    """Absolute tolerance; passes when either tolerance is met (math.isclose)."""
    rel_tol: float = Field(1e-9, ge=0)


def numeric(cfg: NumericConfig, ctx: GradeContext) -> GraderResult:
    out = ctx.trace.final_output
    tol = {"abs_tol": cfg.abs_tol, "rel_tol": cfg.rel_tol}
    if out is None:
        return _no_output("numeric", cfg, expected=cfg.expected, **tol)
    got = extract_last_number(out)
    if got is None:
        return _result(
            "numeric", cfg, False, expected=cfg.expected, extracted=None,
            reason="no number in the final output", output=_shown(out), **tol,
        )
    ok = math.isclose(got, cfg.expected, rel_tol=cfg.rel_tol, abs_tol=cfg.abs_tol)
    return _result(
        "numeric", cfg, ok, expected=cfg.expected, extracted=got,
        difference=got - cfg.expected, output=_shown(out), **tol,
    )


# --- regex -------------------------------------------------------------------------------


class RegexConfig(GraderConfig):
    pattern: str
    """A Python regular expression searched for anywhere in the output."""
    ignore_case: bool = False
    fullmatch: bool = False
    """Require the whole (stripped) output to match instead of searching in it."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            regex_engine.compile(v)
        except (regex_engine.error, RecursionError, OverflowError) as exc:
            raise ValueError(f"pattern does not compile: {exc}") from None
        return v


#: A pattern that backtracks catastrophically on some output would stall the whole run (grading
#: runs on the event loop); the `regex` engine can stop a match after this many seconds.
REGEX_TIMEOUT_S = 2.0


def regex(cfg: RegexConfig, ctx: GradeContext) -> GraderResult:
    out = ctx.trace.final_output
    if out is None:
        return _no_output("regex", cfg, pattern=cfg.pattern)
    rx = regex_engine.compile(cfg.pattern, regex_engine.IGNORECASE if cfg.ignore_case else 0)
    try:
        m = (rx.fullmatch(out.strip(), timeout=REGEX_TIMEOUT_S) if cfg.fullmatch
             else rx.search(out, timeout=REGEX_TIMEOUT_S))
    except TimeoutError:
        raise TimeoutError(f"pattern {cfg.pattern!r} ran over {REGEX_TIMEOUT_S}s on a {len(out)}-character "
                           "output and was stopped (catastrophic backtracking?) — simplify the pattern, "
                           "e.g. avoid nested or overlapping repeats like (a|aa)+") from None
    return _result(
        "regex", cfg, m is not None, pattern=cfg.pattern,
        match=m.group(0) if m else None, output=_shown(out),
    )


# --- tool_sequence -----------------------------------------------------------------------


class ToolSequenceConfig(GraderConfig):
    required: list[str] = Field(default_factory=list)
    """Tools that must be called successfully in this order (other calls may sit between)."""
    forbidden: list[str] = Field(default_factory=list)
    """Tools that must never be called, successfully or not."""

    @model_validator(mode="after")
    def _needs_something(self) -> ToolSequenceConfig:
        if not self.required and not self.forbidden:
            raise ValueError("give `required` and/or `forbidden` tool names")
        return self


def tool_sequence(cfg: ToolSequenceConfig, ctx: GradeContext) -> GraderResult:
    calls = ctx.trace.tool_calls
    ok_names = [c.name for c in calls if c.ok]
    # Greedy subsequence match: walk the successful calls once, ticking required steps off.
    matched = 0
    for name in ok_names:
        if matched < len(cfg.required) and name == cfg.required[matched]:
            matched += 1
    missing = cfg.required[matched:]
    forbidden_called = sorted({c.name for c in calls if c.name in cfg.forbidden})
    return _result(
        "tool_sequence", cfg, not missing and not forbidden_called,
        required=cfg.required, forbidden=cfg.forbidden,
        calls=[c.name if c.ok else f"{c.name} ({c.error_kind})" for c in calls],
        missing_from=missing, forbidden_called=forbidden_called,
    )


# --- declined ----------------------------------------------------------------------------


class DeclinedConfig(GraderConfig):
    forbid_tools: list[str] = Field(default_factory=list)
    """Tools the agent must not even try before declining."""


def declined(cfg: DeclinedConfig, ctx: GradeContext) -> GraderResult:
    trace = ctx.trace
    used = sorted({c.name for c in trace.tool_calls if c.name in cfg.forbid_tools})
    return _result(
        "declined", cfg, trace.status == "declined" and not used,
        status=trace.status, forbid_tools=cfg.forbid_tools, forbidden_called=used,
        output=_shown(trace.final_output),
    )
