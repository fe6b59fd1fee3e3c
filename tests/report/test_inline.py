"""A report kernel renders each figure once: one PNG per figure after its cell, no inline backend."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from typing import Any  # noqa: E402

import pytest  # noqa: E402
from IPython.core.events import EventManager, available_events  # noqa: E402
from matplotlib import pyplot  # noqa: E402

from aeh.report import _inline  # noqa: E402


class _Shell:
    def __init__(self) -> None:
        self.events = EventManager(self, available_events)


def test_the_hook_is_registered_once_and_the_inline_backend_is_not_used() -> None:
    shell = _Shell()
    _inline.render_figures_once(shell)
    _inline.render_figures_once(shell)  # a second report in the same process registers nothing twice
    assert shell.events.callbacks["post_execute"] == [_inline.show_figures]
    assert matplotlib.get_backend().lower() == "agg" and not matplotlib.is_interactive()


def test_each_figure_is_drawn_once_shown_as_png_and_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    shown: list[Any] = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    from matplotlib.figure import Figure

    figures = [pyplot.figure(layout="tight") for _ in range(2)]
    for i, fig in enumerate(figures):
        fig.add_subplot().set_title(f"chart {i}")
    drawn: list[Any] = []
    draw = Figure.draw
    monkeypatch.setattr(Figure, "draw", lambda fig, renderer: (drawn.append(fig), draw(fig, renderer)))
    empty = pyplot.figure()  # no axes: nothing to show
    _inline.show_figures()
    # per figure: the layout engine's pass (drawing disabled) and the one render, nothing per cell
    assert drawn == [figures[0], figures[0], figures[1], figures[1]]
    assert [obj.data[:8] for obj in shown] == [b"\x89PNG\r\n\x1a\n"] * 2
    assert not pyplot.get_fignums() and empty.number not in pyplot.get_fignums()


_DEFERRED = r'''
import json, sys
from pathlib import Path
import nbformat
from aeh.report import execute_notebook
tmp = Path(sys.argv[1])
cells = [nbformat.v4.new_code_cell("x = 1"),
         nbformat.v4.new_code_cell("from aeh.report import views\nviews.setup()\n"
                                   "print(sorted(m for m in sys.modules if m.startswith('matplotlib')))"),
         nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nfig = plt.figure()\nfig.add_subplot().plot([1, 2])\n"
                                   "print(plt.rcParams['axes.grid'], plt.rcParams['figure.dpi'], plt.get_backend())")]
cells[0].metadata["tags"] = ["parameters"]
cells[1].source = "import sys\n" + cells[1].source
nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                      "language": "python"}})
nbformat.write(nb, tmp / "nb.ipynb")
execute_notebook(tmp / "nb.ipynb", {}, tmp / "out.ipynb", kernel="inprocess")
import matplotlib
print(json.dumps({"outputs": [c["outputs"] for c in json.loads((tmp / "out.ipynb").read_text())["cells"][1:]],
                  "grid_after": matplotlib.rcParams["axes.grid"],
                  "finders": [type(f).__name__ for f in sys.meta_path]}))
'''


@pytest.mark.slow
def test_a_report_shell_imports_matplotlib_only_when_a_cell_draws(tmp_path) -> None:
    """`views.setup()` in aeh's report shell imports nothing; the first `import matplotlib.pyplot`
    gets the report theme and the one-PNG display, and nothing is left watching afterwards."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _DEFERRED, str(tmp_path)], capture_output=True, text=True,
                          check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    setup, drawn = found["outputs"][-2], found["outputs"][-1]
    assert "".join(setup[0]["text"]).strip() == "[]"  # setup() imported no matplotlib
    assert "".join(drawn[0]["text"]).split() == ["True", "90.0", "agg"]  # theme (whitegrid, 90 dpi) and Agg, in time
    assert [o["output_type"] for o in drawn] == ["stream", "display_data"]
    assert "image/png" in drawn[1]["data"]  # the figure shown once after its cell
    assert found["grid_after"] is False  # the theme stayed inside the render
    assert "_SetUpOnImport" not in found["finders"]
