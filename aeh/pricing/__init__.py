"""Versioned price table: token usage → USD. A model missing from the table is unpriced (None).

A model name is priced only when it is a table entry, one of an entry's explicit `aliases`, or a
dated snapshot matched by one of an entry's `snapshots` patterns. There is no prefix fallback:
`gpt-5-nano` is not `gpt-5`, and a wrong price is worse than none.
"""

from __future__ import annotations

import datetime as _dt
import logging
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from aeh._util.yaml import load_yaml, read_text_limited
from aeh.errors import Problem, ValidationError

__all__ = ["DEFAULT_PRICE_TABLE", "ModelPrice", "PriceTable", "load_price_table"]

DEFAULT_PRICE_TABLE = Path(__file__).with_name("prices.yaml")

logger = logging.getLogger("aeh.pricing")

# A snapshot pattern only ever prices a name that ends in a date: providers date their snapshots,
# while a different model of the same family (`-nano`, `-pro`, `-5`) never ends in one.
_DATED_SUFFIX = re.compile(r"-(\d{4})-?(\d{2})-?(\d{2})$")
_SNAPSHOT_FIX = ("write a regular expression that fully matches the dated names only, "
                 r"e.g. 'gpt-4o-\d{4}-\d{2}-\d{2}' or 'claude-sonnet-4-5-\d{8}'")


def _is_dated(name: str) -> bool:
    """True when `name` ends in -YYYY-MM-DD or -YYYYMMDD and that is a real calendar date."""
    found = _DATED_SUFFIX.search(name)
    if found is None or name[found.start():].count("-") not in (1, 3):
        return False
    try:
        _dt.date(*(int(g) for g in found.groups()))
    except ValueError:
        return False
    return True


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
    return pattern


class ModelPrice(BaseModel):
    """USD per million tokens for one model, and the exact other names it is billed under."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)
    aliases: list[str] = Field(default_factory=list)
    """Exact other names billed at this price (e.g. `gpt-4o-2024-08-06`)."""
    snapshots: list[Annotated[str, AfterValidator(_compiles)]] = Field(default_factory=list)
    """Regular expressions matched against the whole name; they price dated names only."""
    max_input_tokens: int | None = Field(default=None, gt=0)
    """Above this many input tokens in one call the provider bills a long-context rate this
    table does not hold, so such a call is unpriced rather than priced too low."""


class _PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: str
    date: str
    currency: str = "USD"
    models: dict[str, ModelPrice]


@dataclass(frozen=True)
class PriceTable:
    """A loaded price table. One instance serves one run, and warns once per unpriced model."""

    version: str
    date: str
    models: dict[str, ModelPrice]
    source: str
    _aliases: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    _warned: set[str] = field(default_factory=set, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, entry in self.models.items():
            for alias in entry.aliases:
                self._aliases.setdefault(alias, name)

    def price(self, model: str | None, tokens_in: int, tokens_out: int) -> float | None:
        """USD for this usage, or None when the model is not in the table (unpriced ≠ free)."""
        entry = self.lookup(model)
        if entry is None:
            self._warn_once(model, "is not in the price table (no exact name, alias or dated snapshot)")
            return None
        if entry.max_input_tokens is not None and tokens_in > entry.max_input_tokens:
            self._warn_once(model, f"had a call with {tokens_in} input tokens, above the "
                                   f"{entry.max_input_tokens} the table prices (long-context rate)")
            return None
        return (tokens_in * entry.input_per_mtok + tokens_out * entry.output_per_mtok) / 1e6

    def lookup(self, model: str | None) -> ModelPrice | None:
        """The entry billed for `model`: exact name, explicit alias, or one dated-snapshot match."""
        if not model:
            return None
        if model in self.models:
            return self.models[model]
        if model in self._aliases:
            return self.models[self._aliases[model]]
        if not _is_dated(model):
            return None
        matches = [entry for entry in self.models.values()
                   if any(re.fullmatch(p, model) for p in entry.snapshots)]
        # Two entries claiming one snapshot is a table error; guessing between them would misprice.
        return matches[0] if len(matches) == 1 else None

    def _warn_once(self, model: str | None, why: str) -> None:
        name = model or "<unknown>"
        with self._lock:
            if name in self._warned:
                return
            self._warned.add(name)
        logger.warning("model %r %s: its cost is unpriced (None), not free — price table %s (%s), %s",
                       name, why, self.version, self.date, self.source)


def _problems(file: Path, exc: PydanticValidationError) -> list[Problem]:
    problems = []
    for e in exc.errors():
        loc = [str(p) for p in e["loc"]]
        fix = _SNAPSHOT_FIX if "snapshots" in loc else "see aeh/pricing/prices.yaml for the expected shape"
        problems.append(Problem(str(file), ".".join(loc) or "-", e["msg"], fix))
    return problems


def _name_clashes(file: Path, parsed: _PriceFile) -> list[Problem]:
    """An alias naming another entry, or two entries sharing an alias, would make a price ambiguous."""
    problems: list[Problem] = []
    owner: dict[str, str] = {}
    for name, entry in parsed.models.items():
        for i, alias in enumerate(entry.aliases):
            other = alias if alias in parsed.models else owner.get(alias)
            if other is not None and other != name:
                problems.append(Problem(str(file), f"models.{name}.aliases.{i}",
                                        f"{alias!r} already names the entry {other!r}",
                                        "keep each name under exactly one entry"))
            owner.setdefault(alias, name)
    return problems


def load_price_table(path: str | Path | None = None) -> PriceTable:
    """Load the shipped table, or a user's own YAML with the same shape (it replaces the shipped one)."""
    file = Path(path) if path else DEFAULT_PRICE_TABLE
    try:
        raw: Any = load_yaml(read_text_limited(file))
    except FileNotFoundError:
        raise ValidationError(
            [Problem(str(file), "-", "price table not found", "pass an existing YAML file")],
            what="price table",
        ) from None
    except UnicodeDecodeError:
        raise ValidationError([Problem(str(file), "-", "is not UTF-8 text (a binary file?)",
                                       "pass a price table YAML file")], what="price table") from None
    except OSError as exc:
        raise ValidationError([Problem(str(file), "-", f"cannot read the price table: {exc}",
                                       "pass a price table YAML file")], what="price table") from None
    except yaml.YAMLError as exc:
        raise ValidationError(
            [Problem(str(file), "-", f"YAML syntax error: {exc}", "fix the YAML")], "price table"
        ) from None
    try:
        parsed = _PriceFile.model_validate(raw)
    except PydanticValidationError as exc:
        raise ValidationError(_problems(file, exc), what="price table") from None
    if clashes := _name_clashes(file, parsed):
        raise ValidationError(clashes, what="price table")
    return PriceTable(parsed.version, parsed.date, parsed.models, str(file))
