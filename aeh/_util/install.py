"""How to add an optional extra to the aeh that is running, as one command that works.

The distribution is `aeh-harness` (the import name is `aeh`; the name `aeh` on PyPI is another
project). An editable install from a checkout gets the checkout's path; any other install gets
the distribution's name — pip then sees aeh-harness already installed and fetches only the
extra's own packages, so the line works for a wheel install too.
"""

from __future__ import annotations

import json
from functools import lru_cache
from urllib.parse import unquote, urlparse

__all__ = ["DISTRIBUTION", "install_command"]

DISTRIBUTION = "aeh-harness"


@lru_cache(maxsize=1)
def _editable_checkout() -> str | None:
    """The source folder of an editable install (PEP 610's direct_url.json), else None."""
    # Imported here: importlib.metadata is ~15 ms, and every `import aeh` reaches this module.
    from importlib.metadata import distributions

    # Every match, not the first: run from a checkout, its own build's egg-info comes first on
    # sys.path and has no direct_url.json.
    for dist in distributions(name=DISTRIBUTION):
        try:
            url = json.loads(dist.read_text("direct_url.json") or "null")
        except ValueError:
            continue
        if isinstance(url, dict) and (url.get("dir_info") or {}).get("editable"):
            parsed = urlparse(str(url.get("url", "")))
            if parsed.scheme == "file":
                return unquote(parsed.path)
    return None


def install_command(extra: str) -> str:
    """The pip command that adds `extra` to this installation of aeh."""
    checkout = _editable_checkout()
    if checkout is not None:
        return f"pip install -e '{checkout}[{extra}]'"
    return f"pip install '{DISTRIBUTION}[{extra}]'"
