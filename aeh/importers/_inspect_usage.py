"""Inspect model usage as aeh tokens and cost.

Inspect's `input_tokens` excludes cached tokens, so aeh's input count is `input_tokens +
input_tokens_cache_read + input_tokens_cache_write` (all priced at the input rate: the price
table holds no cache rates, so a cached prompt is priced high, never free). A cost Inspect
recorded (`total_cost`) is kept as recorded; otherwise the counts are priced from the price
table under the model's name, or, when the table has no such name, under the name without its
provider prefix (`openai/gpt-4o` → `gpt-4o`, `openrouter/openai/gpt-4o` → `gpt-4o`). A model the
table cannot price leaves the attempt unpriced (cost None), not free.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, Protocol

from aeh.pricing import PriceTable

__all__ = ["agent_usage", "price_name", "usage_cost", "usage_tokens"]

CostSource = Literal["recorded", "price table"]


class Usage(Protocol):
    """The fields of Inspect's `ModelUsage` read here."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def input_tokens_cache_read(self) -> int | None: ...
    @property
    def input_tokens_cache_write(self) -> int | None: ...
    @property
    def total_cost(self) -> float | None: ...


def usage_tokens(usage: Usage | None) -> tuple[int, int]:
    """(input tokens including cached ones, output tokens); (0, 0) when nothing was recorded."""
    if usage is None:
        return 0, 0
    cached = (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0)
    return usage.input_tokens + cached, usage.output_tokens


def price_name(prices: PriceTable, model: str) -> str:
    """The name `model` is billed under in `prices`: itself, else without its provider prefix."""
    if prices.lookup(model) is not None:
        return model
    bare = model.rsplit("/", 1)[-1]
    return bare if prices.lookup(bare) is not None else model


def usage_cost(usage: Mapping[str, Usage], prices: PriceTable) -> tuple[float | None, CostSource | None]:
    """USD of every model's usage and where the figure came from; (None, None) when any model
    cannot be priced or no usage was recorded (unpriced, not free)."""
    if not usage:
        return None, None
    if all(u.total_cost is not None for u in usage.values()):
        return sum(u.total_cost or 0.0 for u in usage.values()), "recorded"
    total = 0.0
    for model, u in usage.items():
        if u.total_cost is not None:
            total += u.total_cost
            continue
        cost = prices.price(price_name(prices, model), *usage_tokens(u))
        if cost is None:
            return None, None
        total += cost
    return total, "price table"


def agent_usage(sample_usage: Mapping[str, Usage], scorer_usage: Mapping[str, Usage]) -> dict[str, Usage]:
    """The sample's usage less its scorers' (Inspect's `model_usage` counts a model-graded
    scorer's calls with the solver's): a model left with no tokens drops out."""
    out: dict[str, Usage] = {}
    for model, usage in sample_usage.items():
        spent = scorer_usage.get(model)
        if spent is None:
            out[model] = usage
            continue
        left = _Left(usage, spent)
        if sum(usage_tokens(left)) > 0:
            out[model] = left
    return out


class _Left:
    """One model's usage minus its scorers' share; a recorded cost is kept only when both sides
    recorded one (else unknown, so the price table prices what is left)."""

    def __init__(self, total: Usage, spent: Usage) -> None:
        self.input_tokens = max(0, total.input_tokens - spent.input_tokens)
        self.output_tokens = max(0, total.output_tokens - spent.output_tokens)
        self.input_tokens_cache_read = _less(total.input_tokens_cache_read, spent.input_tokens_cache_read)
        self.input_tokens_cache_write = _less(total.input_tokens_cache_write, spent.input_tokens_cache_write)
        self.total_cost = (max(0.0, total.total_cost - spent.total_cost)
                           if total.total_cost is not None and spent.total_cost is not None else None)


def _less(a: int | None, b: int | None) -> int | None:
    return None if a is None else max(0, a - (b or 0))
