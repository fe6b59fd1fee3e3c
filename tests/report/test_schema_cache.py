"""nbformat's schema validators come from a per-machine cache inside `aeh report`, and validate the same."""

from __future__ import annotations

from pathlib import Path

import fastjsonschema
import nbformat
import pytest
from nbformat import json_compat, validator

from aeh.report._schema_cache import cached_schema_validators, compiled_validator

SCHEMA = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object", "required": ["n"],
          "properties": {"n": {"type": "integer", "minimum": 0}, "s": {"type": "string", "pattern": "^a+$"}}}


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("aeh-nbschema-*.bin"))


def _no_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the schema was generated again")

    monkeypatch.setattr(fastjsonschema, "compile", refuse)
    monkeypatch.setattr(fastjsonschema, "compile_to_code", refuse)


def test_second_use_loads_the_generated_code_and_validates_the_same(tmp_path, monkeypatch) -> None:
    first = compiled_validator(SCHEMA, str(tmp_path))
    assert len(_entries(tmp_path)) == 1
    _no_generation(monkeypatch)
    again = compiled_validator(SCHEMA, str(tmp_path))
    for check in (first, again):
        assert check({"n": 3, "s": "aaa"}) == {"n": 3, "s": "aaa"}
        for bad in ({}, {"n": -1}, {"n": 1, "s": "b"}):
            with pytest.raises(fastjsonschema.JsonSchemaValueException):
                check(bad)


def test_an_unreadable_entry_is_generated_again(tmp_path) -> None:
    compiled_validator(SCHEMA, str(tmp_path))
    [entry] = _entries(tmp_path)
    entry.write_bytes(b"not marshal data")
    check = compiled_validator(SCHEMA, str(tmp_path))
    with pytest.raises(fastjsonschema.JsonSchemaValueException):
        check({"n": "x"})
    assert compiled_validator(SCHEMA, str(tmp_path))({"n": 0}) == {"n": 0}
    assert entry.read_bytes() != b"not marshal data"


def test_another_schema_is_another_entry(tmp_path) -> None:
    compiled_validator(SCHEMA, str(tmp_path))
    compiled_validator({**SCHEMA, "required": ["s"]}, str(tmp_path))
    assert len(_entries(tmp_path)) == 2


def test_notebook_validation_inside_the_block(tmp_path, monkeypatch) -> None:
    real = json_compat.fastjsonschema
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])  # validates the cell itself
    monkeypatch.setattr(validator, "validators", {})  # a fresh process: no validator made yet
    with cached_schema_validators(str(tmp_path)):
        nbformat.validate(nb)
    assert json_compat.fastjsonschema is real and _entries(tmp_path)
    monkeypatch.setattr(validator, "validators", {})  # a fresh process: nothing generated
    _no_generation(monkeypatch)
    with cached_schema_validators(str(tmp_path)):
        nbformat.validate(nb)
        nb.cells[0]["cell_type"] = "nonsense"
        with pytest.raises(nbformat.ValidationError):
            nbformat.validate(nb)


def test_without_a_usable_cache_directory_the_schema_is_generated(tmp_path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    check = compiled_validator(SCHEMA, str(blocked / "cache"))
    assert check({"n": 1}) == {"n": 1}
    with pytest.raises(fastjsonschema.JsonSchemaValueException):
        check({"n": -1})
