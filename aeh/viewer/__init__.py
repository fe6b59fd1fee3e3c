"""`aeh.view()`: one viewer over every run in a store (ipywidgets; `aeh view` serves it with Voila).

Run index → a run's scorecard → its attempts → one attempt's trace, and compare two runs →
the trajectory diff of one task. It reads the store only: every read opens it read-only.
"""

from aeh._util.optional import require_extra

require_extra("aeh.view", ("ipywidgets", "anywidget", "IPython"))

from aeh.viewer._app import TABS, Viewer, view  # noqa: E402  (after the extra check, for its message)
from aeh.viewer._ready import READY_ENV, ready  # noqa: E402

__all__ = ["READY_ENV", "TABS", "Viewer", "ready", "view"]
