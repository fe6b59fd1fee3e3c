"""The base of every front-door result: a pandas DataFrame that carries typed, read-only fields.

A result *is* its rows (`isinstance(r, pd.DataFrame)`; `iterrows`, `to_csv`, `groupby`, `plot`,
`pd.concat` …) and declares its fields like a frozen dataclass:

    class RunResult(ResultFrame):
        run_id: str
        warnings: list[str] = field(default_factory=list)

    RunResult(table, run_id="…")      # rows first; every field by keyword; unknown/missing: TypeError

The fields ride in pandas' `_metadata`, the mechanism pandas documents for subclasses, so what
pandas does to the rows decides what happens to them:

- an operation on one result (`r[r.rate < 1]`, `head`, `sort_values`, `assign`, `copy`,
  `groupby(...).sum()` …) returns the same class with the same fields: they describe the run the
  rows came from, whatever rows are left. Such a derived view prints as pandas prints rows, under
  one line saying it is a view (the verdict header and the CLI text are the whole table's);
- an operation that combines frames (`pd.concat`, `merge`) keeps the fields only when every input
  comes from the same result; otherwise it returns a plain DataFrame (two runs have no one run id);
- pickling keeps them (`NDFrame.__getstate__` stores `_metadata`); `copy.deepcopy` copies them;
- `r.table` is the rows as a plain DataFrame (copy-on-write: no data is copied).

`attrs` keeps the keys the earlier DataFrame-with-attrs API had (`r.attrs["run_id"]`,
`compare(...).attrs["verdict"]["status"]` …) for scripts written against it: reading one warns
(DeprecationWarning) and names the field that replaces it. Those keys are computed when read and
are not stored in the dict, so pandas never deep-copies them on each operation.
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
import weakref
from collections.abc import Callable, Hashable, Mapping
from typing import Any, ClassVar, Self, dataclass_transform

import pandas as pd
from pydantic import BaseModel

__all__ = ["ResultFrame", "plain"]

_MISSING = object()


class _Origin:
    """The rows and columns a result was built with; shared by everything derived from it."""

    __slots__ = ("columns", "index")

    def __init__(self, index: pd.Index, columns: pd.Index) -> None:
        self.index, self.columns = index, columns

    def __getstate__(self) -> tuple[pd.Index, pd.Index]:
        return self.index, self.columns

    def __setstate__(self, state: tuple[pd.Index, pd.Index]) -> None:
        self.index, self.columns = state


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(dataclasses.field,))
class ResultFrame(pd.DataFrame):  # type: ignore[misc]  # pandas ships no type information here
    """A DataFrame whose declared fields are typed, read-only and kept through pandas operations."""

    #: field name → default value, or a zero-argument factory (`field(default_factory=…)`)
    _field_defaults: ClassVar[dict[str, tuple[Any, Callable[[], Any] | None]]] = {}
    _fields: ClassVar[tuple[str, ...]] = ()
    #: earlier `attrs` keys whose field has another name (attrs key → field)
    _renamed_attrs: ClassVar[dict[str, str]] = {}
    #: the rows follow from the fields (`_rows`), so a changed copy rebuilds them
    _rows_from_fields: ClassVar[bool] = False
    _metadata: list[str] = ["_aeh_origin"]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names: list[str] = list(cls._fields)
        defaults = dict(cls._field_defaults)
        for name, hint in vars(cls).get("__annotations__", {}).items():
            if name.startswith("_") or str(hint).startswith(("ClassVar", "typing.ClassVar")):
                continue
            value = vars(cls).get(name, _MISSING)
            if isinstance(value, dataclasses.Field):
                factory = value.default_factory
                defaults[name] = (value.default, None if factory is dataclasses.MISSING else factory)
            elif value is not _MISSING:
                defaults[name] = (value, None)
            if value is not _MISSING:
                delattr(cls, name)  # a frame without its fields raises, it does not read a default
            if name not in names:
                names.append(name)
        cls._fields, cls._field_defaults = tuple(names), defaults
        cls._metadata = [*names, "_aeh_origin"]

    def __init__(self, table: Any = None, **fields: Any) -> None:
        cls = type(self)
        unknown = sorted(set(fields) - set(cls._fields))
        if unknown:
            raise TypeError(f"{cls.__name__} has no field(s) {', '.join(unknown)}")
        values: dict[str, Any] = {}
        for name in cls._fields:
            if name in fields:
                values[name] = fields[name]
            elif name in cls._field_defaults:
                default, factory = cls._field_defaults[name]
                values[name] = factory() if factory is not None else default
            else:
                raise TypeError(f"{cls.__name__} needs the field {name!r}")
        super().__init__(cls._rows(values) if table is None else table)
        for name, value in values.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_aeh_origin", _Origin(self.index, self.columns))

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The names of the typed fields, in declaration order."""
        return cls._fields

    @classmethod
    def _rows(cls, fields: Mapping[str, Any]) -> pd.DataFrame:
        """The rows of a result built without a table (a class whose rows follow from its fields)."""
        return pd.DataFrame()

    def with_fields(self, **changes: Any) -> Self:
        """A copy with some fields changed, as `dataclasses.replace` makes one."""
        current = {name: getattr(self, name) for name in type(self)._fields}
        table = None if type(self)._rows_from_fields else pd.DataFrame(self)
        return type(self)(table, **{**current, **changes})

    @property
    def table(self) -> pd.DataFrame:
        """The rows as a plain DataFrame, without the fields. Under copy-on-write (always, from
        pandas 3) no data is copied; without it (pandas 2's default) the rows are copied, so a
        change to the table never reaches the result."""
        return pd.DataFrame(self, copy=not _copy_on_write())

    # -- pandas' subclass hooks ------------------------------------------------------------------
    @property
    def _constructor(self) -> Callable[..., ResultFrame]:
        cls = type(self)

        def derived(*args: Any, **kwargs: Any) -> ResultFrame:
            frame = pd.DataFrame(*args, **kwargs)
            return cls._from_mgr(frame._mgr, frame._mgr.axes)  # type: ignore[no-any-return]

        return derived

    def _constructor_from_mgr(self, mgr: Any, axes: Any) -> ResultFrame:
        # fields arrive with __finalize__, which pandas calls next
        return type(self)._from_mgr(mgr, axes)  # type: ignore[no-any-return]

    def _constructor_sliced_from_mgr(self, mgr: Any, axes: Any) -> pd.Series:
        series = pd.Series._from_mgr(mgr, axes)
        object.__setattr__(series, "_name", None)  # the caller sets the real name, as pandas does
        return series

    def __finalize__(self, other: Any, method: str | None = None, **kwargs: Any) -> Any:
        if isinstance(other, pd.DataFrame | pd.Series):
            source = other if type(other) is type(self) and other._has_fields() else None
        else:
            # pandas 3 names the inputs of a concat or merge `input_objs`; pandas 2 `objs`
            inputs = list(getattr(other, "input_objs", None) or getattr(other, "objs", None) or [])
            first = inputs[0] if inputs else None
            same = (type(first) is type(self) and first._has_fields()
                    and all(type(o) is type(self) and o._aeh_origin is first._aeh_origin for o in inputs))
            source = first if same else None
        if source is None:  # rows of several runs, or of no result: no fields describe them
            plain_frame = pd.DataFrame(self)
            return pd.DataFrame.__finalize__(plain_frame, other, method=method, **kwargs)
        # a frame as the source: pandas 2 would read `source.objs` for method="concat"
        super().__finalize__(source, **kwargs)
        if source is not other:  # pd.concat of pieces of one result
            pd.DataFrame.__finalize__(self, other, method=method, **kwargs)
        return self

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        out = self.copy(deep=True)
        for name in type(self)._fields if self._has_fields() else ():
            object.__setattr__(out, name, copy.deepcopy(getattr(self, name), memo))
        return out  # type: ignore[no-any-return]

    def __setattr__(self, name: str, value: Any) -> None:
        if name in type(self)._fields:
            raise dataclasses.FrozenInstanceError(f"{type(self).__name__}.{name} is read-only; "
                                 f"result.with_fields({name}=...) makes a changed copy")
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in type(self)._fields:
            raise dataclasses.FrozenInstanceError(f"{type(self).__name__}.{name} is read-only")
        super().__delattr__(name)

    def _has_fields(self) -> bool:
        return "_aeh_origin" in self.__dict__

    # -- the earlier attrs keys --------------------------------------------------------------------
    @property
    def attrs(self) -> dict[Hashable, Any]:
        current = self._attrs
        if type(current) is not _EarlierAttrs or current.owner() is not self:
            current = _EarlierAttrs(self, current)
            object.__setattr__(self, "_attrs", current)
        return current

    @attrs.setter
    def attrs(self, value: Mapping[Hashable, Any]) -> None:
        object.__setattr__(self, "_attrs", _EarlierAttrs(self, dict(value)))

    def _earlier_attr(self, key: Hashable) -> tuple[str, Any] | None:
        """(the field that replaces `attrs[key]`, its value in the earlier plain shape), or None."""
        name = type(self)._renamed_attrs.get(key, key) if isinstance(key, str) else None
        if name is None or name not in type(self)._fields or not self._has_fields():
            return None
        return name, plain(getattr(self, name))

    # -- rendering ----------------------------------------------------------------------------------
    def _as_returned(self) -> bool:
        """The whole table the result was built with (not a slice, a reordering, other columns)."""
        if not self._has_fields():
            return False
        origin: _Origin = self._aeh_origin
        return bool(self.columns.equals(origin.columns) and self.index.equals(origin.index))

    def _view_note(self) -> str:
        origin: _Origin | None = self.__dict__.get("_aeh_origin")
        if origin is None:
            return f"{type(self).__name__} rows without the result's fields"
        return (f"{type(self).__name__} view: {len(self)} of {len(origin.index)} rows, {len(self.columns)} of "
                f"{len(origin.columns)} columns — the fields and the verdict describe the whole result")

    def _header(self) -> str:
        raise NotImplementedError

    def _text(self) -> str:
        raise NotImplementedError

    def _repr_html_(self) -> str | None:
        if self._as_returned():
            return self._header() + str(pd.DataFrame(self).to_html(border=0, max_rows=60))
        rows = pd.DataFrame(self)._repr_html_()
        return f"<div class='aeh-view'>{self._view_note()}</div>{rows}" if rows is not None else None

    def __repr__(self) -> str:
        if self._as_returned():
            return self._text()
        return f"{self._view_note()}\n{pd.DataFrame(self)!r}"

    def __str__(self) -> str:
        return self.__repr__()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.__repr__())


class _EarlierAttrs(dict[Hashable, Any]):
    """A frame's `attrs`: the keys set on it, plus the earlier API's keys, read from the fields
    with a DeprecationWarning. Only the set keys are stored, iterated, copied and pickled."""

    def __init__(self, owner: ResultFrame, items: Mapping[Hashable, Any]) -> None:
        super().__init__(items)
        self.owner = weakref.ref(owner)

    def _earlier(self, key: Hashable) -> tuple[str, Any] | None:
        owner = self.owner()
        return owner._earlier_attr(key) if owner is not None else None

    def __missing__(self, key: Hashable) -> Any:
        found = self._earlier(key)
        if found is None:
            raise KeyError(key)
        return _warned(self.owner(), key, *found)

    def get(self, key: Hashable, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        found = self._earlier(key)
        return default if found is None else _warned(self.owner(), key, *found)

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or (isinstance(key, Hashable) and self._earlier(key) is not None)

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (dict(self),)

    def __copy__(self) -> dict[Hashable, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Hashable, Any]:
        return copy.deepcopy(dict(self), memo)


def _warned(owner: ResultFrame | None, key: Hashable, name: str, value: Any) -> Any:
    kind = type(owner).__name__ if owner is not None else "result"
    warnings.warn(f"{kind}.attrs[{key!r}] is deprecated: read the typed field `.{name}` "
                  "(attrs keeps the earlier keys for one release)", DeprecationWarning, stacklevel=3)
    return value


def _copy_on_write() -> bool:
    if int(pd.__version__.split(".", 1)[0]) >= 3:
        return True
    return pd.get_option("mode.copy_on_write") is True


def plain(value: Any) -> Any:
    """A field's value in the shape the earlier `attrs` held: dicts and lists, not objects."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value
