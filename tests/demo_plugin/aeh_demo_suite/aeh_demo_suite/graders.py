"""A third-party grader kind, registered through the `aeh.graders` entry point."""

from __future__ import annotations

from aeh.plugins import GradeContext, GraderConfig, GraderResult, grader


class PalindromeConfig(GraderConfig):
    word: str


@grader("palindrome_verdict", config=PalindromeConfig)
def palindrome_verdict(cfg: PalindromeConfig, ctx: GradeContext) -> GraderResult:
    """Passes when the answer's yes/no matches whether `word` reads the same backwards."""
    truth = cfg.word == cfg.word[::-1]
    said_yes = (ctx.trace.final_output or "").strip().lower().startswith("yes")
    return GraderResult(kind="palindrome_verdict", name=cfg.name or "palindrome_verdict",
                        passed=said_yes == truth, evidence={"word": cfg.word, "truth": truth,
                                                            "said_yes": said_yes})
