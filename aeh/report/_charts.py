"""The report's chart theme and the few chart shapes the run report draws, in plain matplotlib.

seaborn drew these before. Importing it (it also imports ipywidgets and scipy.cluster) and its
categorical plotters were a measurable part of every `aeh report`; the shapes here are simple
enough to draw directly. The theme is seaborn's `whitegrid` style in its `notebook` context,
written out, so charts that still use seaborn (comparison, recovery) look the same beside these.
"""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from typing import Any

import pandas as pd

__all__ = ["PALETTE", "THEME", "categorical_y", "categories", "desaturate", "grouped_barh", "legend_outside", "theme"]

#: seaborn's "deep" palette: the colour cycle of every report chart.
PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3",
           "#937860", "#da8bc3", "#8c8c8c", "#ccb974", "#64b5cd")

#: What `seaborn.set_theme(style="whitegrid", context="notebook")` sets (seaborn 0.13).
THEME: dict[str, Any] = {
    "axes.axisbelow": True, "axes.edgecolor": ".8", "axes.grid": True, "axes.labelcolor": ".15",
    "axes.labelsize": 12.0, "axes.linewidth": 1.25, "axes.titlesize": 12.0,
    "font.sans-serif": ["Arial", "DejaVu Sans", "Liberation Sans", "Bitstream Vera Sans", "sans-serif"],
    "font.size": 12.0, "grid.color": ".8", "grid.linewidth": 1.0, "legend.fontsize": 11.0,
    "legend.title_fontsize": 12.0, "lines.solid_capstyle": "round", "patch.edgecolor": "w",
    "patch.force_edgecolor": True, "text.color": ".15",
    "xtick.bottom": False, "xtick.color": ".15", "xtick.labelsize": 11.0, "xtick.major.size": 6.0,
    "xtick.major.width": 1.25, "xtick.minor.size": 4.0, "xtick.minor.width": 1.0,
    "ytick.color": ".15", "ytick.labelsize": 11.0, "ytick.left": False, "ytick.major.size": 6.0,
    "ytick.major.width": 1.25, "ytick.minor.size": 4.0, "ytick.minor.width": 1.0,
}


def theme() -> dict[str, Any]:
    """THEME with the colour cycle (a cycler needs matplotlib, hence a function)."""
    # heavy: loaded on first use
    from cycler import cycler

    return {**THEME, "axes.prop_cycle": cycler(color=list(PALETTE))}


def desaturate(color: str, saturation: float = 0.75) -> tuple[float, float, float]:
    """The colour with its HLS saturation scaled, as seaborn shades bars and boxes."""
    # heavy: loaded on first use
    from matplotlib.colors import to_rgb

    hue, lightness, sat = colorsys.rgb_to_hls(*to_rgb(color))
    return colorsys.hls_to_rgb(hue, lightness, sat * saturation)


def categories(values: Sequence[Any] | pd.Series) -> list[Any]:
    """Distinct values in order of first appearance (seaborn's category order)."""
    return list(dict.fromkeys(values))


def categorical_y(ax: Any, labels: Sequence[str]) -> None:
    """Rows 0..n-1 labelled top to bottom, no grid line across them (seaborn's categorical axis)."""
    ax.set_yticks(range(len(labels)), labels=list(labels))
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.yaxis.grid(False)


def grouped_barh(ax: Any, long: pd.DataFrame, y: str, x: str, hue: str, *, legend: str) -> None:
    """One horizontal bar per row of `long`: a group per `y` value, one slot per `hue` value."""
    rows, levels = categories(long[y]), categories(long[hue])
    height = 0.8 / len(levels)
    index = {value: i for i, value in enumerate(rows)}
    for j, level in enumerate(levels):
        part = long[long[hue] == level]
        offset = -0.4 + height * (j + 0.5)
        ax.barh([index[v] + offset for v in part[y]], part[x], height=height, label=str(level),
                color=desaturate(PALETTE[j % len(PALETTE)]))
    categorical_y(ax, [str(r) for r in rows])
    ax.set_xlabel(x)
    legend_outside(ax, title=legend)


def legend_outside(ax: Any, **options: Any) -> Any:
    """The axes' legend to the right of the plot area, where it cannot cover a bar or a point
    (the figure's layout makes room for it)."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0, fontsize=8, **options)
