"""`spans(run_id)`: a run's spans as Arrow-backed columns, with span attributes read on demand.

The `attributes` column stays the stored JSON text. Parsing a million of them into dicts took
most of a whole-run read's time and memory (6 s, 939 MB); named keys are pulled out
vectorised instead (`attributes=[...]`, `span_attributes(frame, key)`), and dicts are built
only when asked for (`span_attributes(frame)`), which suits one attempt's trace.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from aeh.errors import ConfigError
from aeh.store import SPANS_SCHEMA, using_store

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from aeh.analysis._read import StoreLike

__all__ = ["span_attributes", "spans"]

_SAMPLE = 1_000  # values looked at to choose a key's column type


def spans(run_id: str, db: StoreLike = None, task_id: str | None = None, attempt: int | None = None, *,
          columns: Sequence[str] | None = None, attributes: Sequence[str] = ()) -> pd.DataFrame:
    """One row per span, in start order, in Arrow-backed columns (`pd.ArrowDtype`).

    `columns` picks span columns (default: all of SPANS_SCHEMA); fewer columns read faster.
    `attributes` (the column) is each span's attribute JSON text: `span_attributes(frame, key)`
    reads one key, `span_attributes(frame)` parses whole dicts. `attributes=["gen_ai.request.model",
    ...]` (the argument) adds one typed column per key, named by the key, null where a span lacks it.
    """
    wanted = list(columns) if columns is not None else list(SPANS_SCHEMA)
    clash = [k for k in attributes if k in SPANS_SCHEMA]
    if clash:
        raise ConfigError(f"spans(attributes={clash}): these keys are also span column names — read them with "
                          "aeh.span_attributes(frame, key) instead")
    read = wanted + (["attributes"] if attributes and "attributes" not in wanted else [])
    with using_store(db) as store:
        frame = store.spans_frame(store.resolve_run_id(run_id), task_id=task_id, attempt=attempt, columns=read)
    if attributes:
        frame = frame.with_columns([_extract(frame["attributes"], key).alias(key) for key in attributes])
    return _to_pandas(frame.select([*wanted, *attributes]))


def span_attributes(frame: pd.DataFrame | pd.Series, key: str | None = None, dtype: Any = None) -> pd.Series:
    """Span attributes of `spans()` rows (a frame with an `attributes` column, or that column).

    With `key`: that key's values, typed (ints, floats, bools or strings; nested values as JSON
    text), null where a span lacks it — vectorised, fine over millions of spans. `dtype` (a
    polars dtype such as `pl.String`) overrides the type. Without `key`: one dict per span,
    parsed in Python — meant for a trace or a filtered few, not a whole big run.
    """
    import pandas as pd  # heavy: loaded on first use
    import polars as pl

    texts = frame["attributes"] if isinstance(frame, pd.DataFrame) else frame
    if key is None:
        return pd.Series([json.loads(t) if isinstance(t, str) and t else {} for t in texts],
                         index=texts.index, name="attributes", dtype=object)
    import pyarrow as pa

    values = _extract(pl.Series("attributes", pa.array(texts)).cast(pl.String), key, dtype)
    return pd.Series(values.to_pandas(use_pyarrow_extension_array=True).array, index=texts.index, name=key)


def _extract(texts: pl.Series, key: str, dtype: Any = None) -> pl.Series:
    """`key`'s value in each JSON text: of `dtype`, or of the type its values have."""
    import polars as pl  # heavy: loaded on first use

    target = dtype if dtype is not None else _key_type(texts, key)
    if target is not None and target != pl.String:
        try:  # exact: a value of another type (a string "123" among ints) fails the decode
            return texts.str.json_decode(pl.Struct({key: target})).struct.field(key)
        except pl.exceptions.PolarsError:
            if dtype is not None:
                raise ConfigError(f"span attribute {key!r} has values that are not {dtype} — leave dtype "
                                  "out to get them as text") from None
    # Strings as themselves; numbers, bools and nested values as their JSON text.
    return texts.str.json_path_match("$[" + json.dumps(key) + "]")


def _key_type(texts: pl.Series, key: str) -> pl.DataType | None:
    """The column type of `key` from a sample of the spans that have it (None: none have it)."""
    import polars as pl  # heavy: loaded on first use

    needle = json.dumps(key, ensure_ascii=False) + ":"
    sample = texts.filter(texts.str.contains(needle, literal=True)).head(_SAMPLE).to_list()
    kinds = {type(v) for v in (json.loads(t).get(key) for t in sample) if v is not None}
    if not kinds:
        return None
    if kinds == {bool}:
        return pl.Boolean()
    if kinds == {int}:
        return pl.Int64()
    if kinds <= {int, float}:
        return pl.Float64()
    return pl.String()


def _to_pandas(frame: pl.DataFrame) -> pd.DataFrame:
    """Arrow-backed pandas columns, converted one at a time so the polars copy of a column is
    freed as soon as its Arrow twin exists (peak memory: the frame plus one column)."""
    import pandas as pd  # heavy: loaded on first use

    out = {}
    for name in list(frame.columns):
        column = frame.drop_in_place(name)
        out[name] = pd.Series(column.to_pandas(use_pyarrow_extension_array=True).array, name=name)
    return pd.DataFrame(out, columns=list(out)) if out else pd.DataFrame()
