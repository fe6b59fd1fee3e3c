"""Write one benchmark's section into benchmarks/RESULTS.md, replacing its previous figures."""

from __future__ import annotations

import platform
import re
from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")


def machine() -> str:
    """One line naming what the figures were measured on."""
    import os

    return (f"Machine: {os.cpu_count()} cores, CPython {platform.python_version()}, "
            f"{platform.system()} {platform.release()}.")


def write_section(name: str, body: str) -> None:
    """Replace the `<!-- name -->` … `<!-- /name -->` block of RESULTS.md (or append it)."""
    block = f"<!-- {name} -->\n{body.rstrip()}\n<!-- /{name} -->\n"
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n\n"
    pattern = re.compile(rf"<!-- {re.escape(name)} -->.*?<!-- /{re.escape(name)} -->\n?", re.S)
    text = pattern.sub(lambda _m: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block
    RESULTS.write_text(text)
    print(f"wrote section {name!r} of {RESULTS}")


def publish(name: str, body: str, write: bool) -> None:
    """Print a benchmark's section, and record it in RESULTS.md when asked to."""
    print(body)
    if write:
        write_section(name, body)
