"""Finding the suite a stored run measured again, or saying why it cannot be.

A run stores its suite's location (`config.suite_spec`: a directory as an absolute path, a shipped
or installed name as given) and its hash (`runs.suite_hash`). A command that reloads the suite
(gate, score, replay, resume, report) loads it from there and checks the hash: a suite that is
gone, no longer loads, or changed is refused with the fix (`--suite PATH`), never replaced by
scoring without it. Runs stored before locations were absolute hold the path as it was typed;
it is read relative to the working directory, so they keep working from the folder they ran in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aeh.errors import AehError, ConfigError
from aeh.models import RunInfo
from aeh.suite.contract import EvalSuite
from aeh.suite.loader import load_suite, suite_hash

__all__ = ["SuiteNotFoundError", "reload_run_suite", "suite_location"]


class SuiteNotFoundError(ConfigError):
    """The suite a run measured cannot be found, does not load, or has changed (exit 2)."""


def suite_location(spec: str | Path) -> str:
    """What a run stores as its suite: a directory as an absolute path, a name as given."""
    path = Path(spec).expanduser()
    return str(path.resolve()) if path.is_dir() or path.is_file() else str(spec)


def _describe(info: RunInfo, spec: str) -> str:
    return f"run {info.run_id} measured suite {info.suite!r} (hash {info.suite_hash[:12]}) from {spec}"


def _fix(flag: str) -> str:
    return f"pass {flag} PATH to point at the suite the run measured"


def reload_run_suite(info: RunInfo, given: str | Path | EvalSuite | None = None, *,
                     flag: str = "--suite", check_given: bool = True) -> EvalSuite | None:
    """The suite run `info` measured: `given` if passed, else the stored location.

    None when the run recorded no location (an import, a suite passed as an object): there is no
    suite to find. Raises `SuiteNotFoundError` when it is gone, does not load, or its hash differs
    from the stored one (for `given` too, unless `check_given=False`: a replay grades with a
    changed suite on purpose).
    """
    if given is not None:
        loaded = load_suite(given)
        if check_given:
            _check_hash(info, loaded, str(given) if isinstance(given, str | Path) else repr(given), flag,
                        given=True)
        return loaded
    spec = info.config.suite.location
    if not spec:
        return None
    where = str(spec)
    local = Path(where).expanduser()
    if not local.is_absolute() and local.is_dir():
        where = str(local.resolve())
    try:
        loaded = load_suite(spec)
    except AehError as exc:
        path_like = any(c in where for c in "/\\") or where.startswith((".", "~"))
        if not path_like or local.is_dir():
            raise SuiteNotFoundError(f"{_describe(info, where)}, which no longer loads "
                                     f"({str(exc).splitlines()[0]}) — {_fix(flag)}") from exc
        typed = "" if local.is_absolute() else (" (the run stored the path as typed: run the command from "
                                                "the folder the run started in, or point at the suite)")
        raise SuiteNotFoundError(f"{_describe(info, where)}, which is not at {local.resolve()} any more{typed} "
                                 f"— {_fix(flag)}") from exc
    _check_hash(info, loaded, where, flag, given=False)
    return loaded


def _check_hash(info: RunInfo, loaded: Any, where: str, flag: str, *, given: bool) -> None:
    now = suite_hash(loaded)
    if now == info.suite_hash:
        return
    source = f"{flag} {where}" if given else where
    raise SuiteNotFoundError(f"{_describe(info, info.config.suite.location or '(not recorded)')}, but "
                             f"{source} now has hash {now[:12]}: the suite changed since the run, so its "
                             f"tasks, budgets and goldens are not the ones measured — {_fix(flag)}")
