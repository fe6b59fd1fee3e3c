"""`aeh matrix DIR…` over run folders, the coding harness's form (`aeh matrix runs/* --out runs/matrix`).

A run folder is what `aeh run FIXTURE…` writes (`runs/<fixture>-<UTC time>/`): its `results.json`
names the stored run (`run_id`) and the store it is in (`db`). The folder `--out` writes (it holds
`matrix.json`) is recognised and left out, so `runs/*` can be given again after a matrix was
written there; any other folder without `results.json` is refused. In this form errors exit 1,
the coding harness's code for a harness error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aeh.errors import ConfigError

__all__ = ["MATRIX_MARKER", "RunFolderError", "is_run_folder_form", "runs_of_folders", "write_matrix_folder"]

MATRIX_MARKER = "matrix.json"


class RunFolderError(ConfigError):
    """A run folder that cannot be read, in the coding harness's form: its code for a harness error."""

    exit_code = 1


def is_run_folder_form(items: list[str]) -> bool:
    """True when the arguments are folders (the coding harness's form), not run ids."""
    return any(Path(item).is_dir() for item in items)


def runs_of_folders(items: list[str], db: str | None) -> tuple[list[str], str | None, list[str]]:
    """(run ids, the store they are in, folders left out) of the run folders `items` (run ids
    given among them are kept as they are). RunFolderError names a folder that is no run folder."""
    run_ids: list[str] = []
    stores: dict[str, list[str]] = {}
    skipped: list[str] = []
    for item in items:
        folder = Path(item)
        if not folder.is_dir():
            run_ids.append(item)
            continue
        results = folder / "results.json"
        if not results.is_file():
            if (folder / MATRIX_MARKER).is_file():
                skipped.append(item)
                continue
            raise RunFolderError(f"{item}: not a run folder (no results.json) — pass the folders `aeh run FIXTURE…` "
                                 "wrote (runs/<fixture>-<time>/), or run ids")
        try:
            card = json.loads(results.read_text(encoding="utf-8"))
            run_id = str(card["run_id"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RunFolderError(f"{results}:run_id: cannot be read ({exc}) — the folder's results.json is damaged; "
                                 "run the fixture again") from None
        if run_id not in run_ids:
            run_ids.append(run_id)
        if card.get("db"):
            stores.setdefault(str(card["db"]), []).append(item)
    if db is None and len(stores) > 1:
        named = "; ".join(f"{store}: {', '.join(folders)}" for store, folders in sorted(stores.items()))
        raise RunFolderError(f"the run folders were stored in different stores ({named}) — pass --db STORE "
                             "to read them from one, or make a matrix per store")
    return run_ids, db or (next(iter(stores)) if stores else None), skipped


def write_matrix_folder(out: str, frame: Any, text: str) -> list[Path]:
    """`--out DIR`: matrix.md (what was printed), matrix.csv and matrix.json (rows and warnings)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "matrix.md").write_text(text + "\n", encoding="utf-8")
    frame.table.to_csv(folder / "matrix.csv", index=False)
    doc = {"run_ids": list(frame.run_ids), "warnings": list(frame.warnings), "floor": frame.floor,
           "ceiling": frame.ceiling, "rows": json.loads(frame.table.to_json(orient="records"))}
    (folder / MATRIX_MARKER).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return [folder / "matrix.md", folder / "matrix.csv", folder / MATRIX_MARKER]
