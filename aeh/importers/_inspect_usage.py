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

__all__ = ["price_name", "usage_cost", "usage_tokens"]

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
