"""Versioned price table: token usage → USD. A model missing from the table is unpriced (None)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from aeh.errors import Problem, ValidationError

__all__ = ["DEFAULT_PRICE_TABLE", "ModelPrice", "PriceTable", "load_price_table"]

DEFAULT_PRICE_TABLE = Path(__file__).with_name("prices.yaml")


class ModelPrice(BaseModel):
    model_config = ConfigDict(extra="forbid")
    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: str
    date: str
    currency: str = "USD"
    models: dict[str, ModelPrice]


@dataclass(frozen=True)
class PriceTable:
    version: str
    date: str
    models: dict[str, ModelPrice]
    source: str

    def price(self, model: str | None, tokens_in: int, tokens_out: int) -> float | None:
        """USD for this usage, or None when the model is not in the table (unpriced ≠ free)."""
        entry = self.lookup(model)
        if entry is None:
            return None
        return (tokens_in * entry.input_per_mtok + tokens_out * entry.output_per_mtok) / 1e6

    def lookup(self, model: str | None) -> ModelPrice | None:
        if not model:
            return None
        if model in self.models:
            return self.models[model]
        # Providers append dated suffixes (gpt-4o-2024-08-06); fall back to the longest prefix.
        prefixes = [m for m in self.models if model.startswith(m + "-")]
        return self.models[max(prefixes, key=len)] if prefixes else None


def load_price_table(path: str | Path | None = None) -> PriceTable:
    """Load the shipped table, or a user's own YAML with the same shape."""
    file = Path(path) if path else DEFAULT_PRICE_TABLE
    try:
        raw: Any = yaml.safe_load(file.read_text())
    except FileNotFoundError:
        raise ValidationError(
            [Problem(str(file), "-", "price table not found", "pass an existing YAML file")],
            what="price table",
        ) from None
    except yaml.YAMLError as exc:
        raise ValidationError(
            [Problem(str(file), "-", f"YAML syntax error: {exc}", "fix the YAML")], "price table"
        ) from None
    try:
        parsed = _PriceFile.model_validate(raw)
    except PydanticValidationError as exc:
        problems = [
            Problem(str(file), ".".join(str(p) for p in e["loc"]) or "-", e["msg"],
                    "see aeh/pricing/prices.yaml for the expected shape")
            for e in exc.errors()
        ]
        raise ValidationError(problems, what="price table") from None
    return PriceTable(parsed.version, parsed.date, parsed.models, str(file))
