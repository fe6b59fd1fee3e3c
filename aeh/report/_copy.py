"""`copy_notebooks(dest)`: editable copies of the shipped notebooks, for JupyterLab.

The shipped notebooks are what `aeh report` executes; JupyterLab saves outputs into whatever it
opens, so a person explores copies and the package's files never change by use.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aeh.errors import ConfigError
from aeh.report._paths import NOTEBOOKS, notebooks_dir

__all__ = ["NotebookCopy", "copy_notebooks"]


@dataclass(frozen=True)
class NotebookCopy:
    """What `copy_notebooks` did, file by file."""

    #: the folder the copies are in
    folder: Path
    #: files written (new, or replaced with `force`)
    written: tuple[Path, ...]
    #: files already identical to the shipped notebook, left as they were
    unchanged: tuple[Path, ...]

    def __str__(self) -> str:
        lines = [f"wrote {p}" for p in self.written] + [f"unchanged {p}" for p in self.unchanged]
        return "\n".join(lines)


def copy_notebooks(dest: str | Path, *, force: bool = False) -> NotebookCopy:
    """Copy every shipped notebook into `dest` (created if missing).

    A copy that differs from the shipped notebook (edited, or saved with outputs) is kept and
    nothing is written unless `force` is true.
    """
    folder = Path(dest)
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{folder}: not a folder — give a folder to copy the notebooks into")
    sources = [notebooks_dir() / f"{name}.ipynb" for name in NOTEBOOKS]
    edited = [folder / s.name for s in sources
              if (folder / s.name).exists() and (folder / s.name).read_bytes() != s.read_bytes()]
    if edited and not force:
        names = ", ".join(str(p) for p in edited)
        raise ConfigError(f"{names}: differs from the shipped notebook (edited, or saved with outputs) — "
                          "kept; copy into another folder, or pass --force (force=True) to overwrite")
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    unchanged: list[Path] = []
    for source in sources:
        target = folder / source.name
        if target.exists() and target.read_bytes() == source.read_bytes():
            unchanged.append(target)
            continue
        target.write_bytes(source.read_bytes())
        written.append(target)
    return NotebookCopy(folder=folder, written=tuple(written), unchanged=tuple(unchanged))
