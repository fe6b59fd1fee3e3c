"""`aeh report` imports papermill and nbconvert without the extras a report never uses."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, pathlib, sys, tempfile
plugin = pathlib.Path(tempfile.mkdtemp()) / "fake_plugin-0.1.dist-info"  # a papermill engine plugin
plugin.mkdir()
(plugin / "entry_points.txt").write_text("[papermill.engine]\\nfake = json:dumps\\n")
sys.path.append(str(plugin.parent))
from aeh.report import import_lean
import_lean()
from aeh.report._lean_imports import LAZY
kinds = {m: type(sys.modules[m]).__name__ for m in LAZY if m in sys.modules}
served = [m for m in ("nbconvert.postprocessors.serve", "tornado.web", "tornado.httpserver", "webbrowser",
                      "multiprocessing") if m in sys.modules]
skipped = [m for m in ("arrow", "isoduration", "webcolors", "uri_template", "rfc3987_syntax", "boto3", "urllib3")
           if m in sys.modules]
import papermill, nbconvert, nbformat
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x")])
nbformat.validate(nb)  # jsonschema works without its format checkers' libraries
import requests, click, platformdirs, tinycss2, colorama
# the lazy modules load when used
used = [requests.codes.ok, click.unstyle(click.style("x", bold=True)), bool(platformdirs.user_data_dir("x")),
        tinycss2.serialize(tinycss2.parse_declaration_list("color: red")), colorama.Style.RESET_ALL]
from nbconvert.postprocessors.serve import ServePostProcessor  # skipped at import_lean, importable after
import entrypoints, papermill.engines, papermill.iorw
engines = sorted(k for k in papermill.engines.papermill_engines._engines if k)
schemes = sorted(s for s, _ in papermill.iorw.papermill_io._handlers)
print(json.dumps({"kinds": kinds, "skipped": skipped, "used": used, "served": served,
                  "serve_after": ServePostProcessor.__name__,
                  "after": [m for m in ("requests", "urllib3", "click") if m in sys.modules],
                  "engines": engines, "schemes": schemes,
                  "scan_after": [e.name for e in entrypoints.get_group_all("papermill.engine")]}))
"""


def test_papermill_and_nbconvert_import_lean_and_lazy() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    # imported, not run
    assert found["kinds"] == {m: "_LazyModule" for m in (
        "requests", "click", "soupsieve", "charset_normalizer", "platformdirs", "tinycss2", "webencodings", "colorama")}
    assert found["skipped"] == []
    # nbconvert's `--post serve` web server (tornado's HTTP stack) is not imported: a report serves nothing
    assert found["served"] == [] and found["serve_after"] == "ServePostProcessor"
    assert found["used"] == [200, "x", True, "color: red;", "\x1b[0m"]
    assert found["after"] == ["requests", "urllib3", "click"]
    # papermill's own engine and handlers only: no plugin scan (a report reads and writes local
    # files with aeh's engine), and the scan works again afterwards
    assert found["engines"] == ["nbclient"] and "local" in found["schemes"]
    assert found["scan_after"] == ["fake"]


REPORT = """
import json, sys
from aeh.cli import main
code = main(["report", "--run-id", sys.argv[1], "--db", sys.argv[2], "--out", sys.argv[3]])
scipy = "scipy.special" in sys.modules  # a run report's 95% intervals come from aeh's kept table
# a report reads stored scores and runs: no suite loader, no trajectory parsing, no label import,
# no grader, pattern engine, invariant or grading pipeline, no attempt machinery
unused = [m for m in ("aeh.suite", "aeh.trajectory", "aeh.store._label_import", "aeh.grading.outcome", "regex",
                      "aeh.grading.invariants", "aeh.grading.pipeline", "aeh.grading.shadow", "aeh.engine.context",
                      "aeh.engine.budget") if m in sys.modules]
from aeh.report import lean_render
with lean_render():  # what a compare report's p-values import
    from scipy import special
names = ("numpy.f2py", "numpy.testing", "numpy.polynomial", "numpy.ctypeslib", "soupsieve", "charset_normalizer")
kinds = {m: type(sys.modules[m]).__name__ for m in names if m in sys.modules}
import bs4, numpy.testing
used = [len(bs4.BeautifulSoup("<p><a>x</a></p>", "html.parser").select("p > a")),
        numpy.testing.assert_equal(1, 1), numpy.polynomial.Polynomial([1, 2])(1.0)]
print(json.dumps({"code": code, "kinds": kinds, "scipy": scipy, "used": used, "unused": unused}))
"""


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_a_report_imports_numpys_unused_packages_and_soupsieve_lazily(mock_db, tmp_path) -> None:
    """`aeh report` imports no scipy.special, suite loader, trajectory parser, label import, grader or
    attempt machinery; under `lean_render` (a report's render), what
    scipy.special and bs4 import at their top without using it is only
    imported, not run (a version that runs them at import fails here), and works when used."""
    db, _, run_id = mock_db
    done = subprocess.run([sys.executable, "-c", REPORT, run_id, str(db), str(tmp_path / "r.html")],
                          capture_output=True, text=True, check=True, timeout=240)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["code"] == 0 and not found["scipy"]
    assert found["unused"] == []
    assert found["kinds"] == {m: "_LazyModule" for m in ("numpy.f2py", "numpy.testing", "numpy.polynomial",
                                                          "numpy.ctypeslib", "soupsieve", "charset_normalizer")}
    assert found["used"] == [1, None, 3.0]
