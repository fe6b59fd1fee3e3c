"""`aeh report` imports papermill and nbconvert without the extras a report never uses."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from aeh.report import import_lean
import_lean()
kinds = {m: type(sys.modules[m]).__name__ for m in ("requests", "click") if m in sys.modules}
skipped = [m for m in ("arrow", "isoduration", "webcolors", "uri_template", "rfc3987_syntax", "boto3", "urllib3")
           if m in sys.modules]
import papermill, nbconvert, nbformat
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x")])
nbformat.validate(nb)  # jsonschema works without its format checkers' libraries
import requests, click
used = [requests.codes.ok, click.unstyle(click.style("x", bold=True))]  # the lazy modules load when used
print(json.dumps({"kinds": kinds, "skipped": skipped, "used": used,
                  "after": [m for m in ("requests", "urllib3", "click") if m in sys.modules]}))
"""


def test_papermill_and_nbconvert_import_lean_and_lazy() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["kinds"] == {"requests": "_LazyModule", "click": "_LazyModule"}  # imported, not run
    assert found["skipped"] == []
    assert found["used"] == [200, "x"] and found["after"] == ["requests", "urllib3", "click"]
