"""Every field a notebook reads of a result exists on that result's type.

The notebooks read results by attribute, so a renamed field fails the cell loudly; this test
finds the same mistake without running a kernel, by reading each notebook's code."""

from __future__ import annotations

import ast

import nbformat
import pytest

from aeh.analysis import AgreementResult, CompareResult, MatrixResult, RunResult
from aeh.report import notebooks_dir

#: (notebook, variable, the result type that variable holds)
READS = [("run_suite", "table", RunResult), ("explore", "table", RunResult),
         ("compare_runs", "comparison", CompareResult), ("judge_agreement", "kappa", AgreementResult),
         ("coding_matrix", "frame", MatrixResult)]


def _code(name: str) -> str:
    nb = nbformat.read(notebooks_dir() / f"{name}.ipynb", as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def _attributes_read(code: str, variable: str) -> set[str]:
    return {node.attr for node in ast.walk(ast.parse(code))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == variable}


@pytest.mark.parametrize(("name", "variable", "kind"), READS)
def test_every_field_a_notebook_reads_exists(name: str, variable: str, kind: type) -> None:
    known = set(kind.field_names()) | set(dir(kind))  # the typed fields and the DataFrame's own API
    assert _attributes_read(_code(name), variable) - known == set()


@pytest.mark.parametrize(("name", "variable", "kind"), READS)
def test_the_variable_is_read_at_all(name: str, variable: str, kind: type) -> None:
    # a renamed variable would make the check above pass vacuously
    assert variable in {n.id for n in ast.walk(ast.parse(_code(name))) if isinstance(n, ast.Name)}


@pytest.mark.parametrize("name", [n for n, _, _ in READS])
def test_no_notebook_reads_dataframe_attrs(name: str) -> None:
    assert ".attrs" not in _code(name)
