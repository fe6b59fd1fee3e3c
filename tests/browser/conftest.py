"""Fixtures for report tests: small mock runs in a temp store, Jupyter state in temp dirs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import aeh

JUPYTER_VARS = ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR")


@pytest.fixture(scope="session", autouse=True)
def jupyter_env(tmp_path_factory: pytest.TempPathFactory):
    """Kernels write no state into $HOME; one shared dir per session keeps matplotlib's font cache."""
    base = tmp_path_factory.getbasetemp() / "jupyter-home"
    with pytest.MonkeyPatch.context() as mp:
        for var in JUPYTER_VARS:
            path = base / var.lower()
            path.mkdir(parents=True, exist_ok=True)
            mp.setenv(var, str(path))
        yield base


@pytest.fixture(scope="session")
def mock_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A store with two toy_math runs: A (mock-strong) and B (mock-degraded), 3 attempts each."""
    db = tmp_path_factory.mktemp("store") / "runs.db"
    a = aeh.run("toy_math", adapter="mock", attempts=3, seed=1, db=str(db)).attrs["run_id"]
    b = aeh.run("toy_math", adapter="mock", attempts=3, seed=2, db=str(db), model="mock-degraded").attrs["run_id"]
    return db, a, b



CHROMIUM = Path("/usr/bin/chromium")
INSTALL = "apt-get update && apt-get install -y chromium"


def _required() -> bool:
    return os.environ.get("CI", "").lower() == "true" or os.environ.get("AEH_BROWSER_TESTS") == "1"


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright (never `playwright install`).

    Module-scoped on purpose: Playwright's sync API keeps an event loop running while it is
    open, and every later test that starts its own loop would fail if it outlived this module.

    Missing locally → skip with the install command; in CI (CI=true) or with AEH_BROWSER_TESTS=1 → fail.
    """
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} not found; install it with `{INSTALL}` (as root)"
        if _required():
            pytest.fail(message + " — browser tests are required when CI=true or AEH_BROWSER_TESTS=1")
        pytest.skip(message)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - playwright is a dev dependency
        if _required():
            pytest.fail(f"playwright is not importable: {exc} — install aeh[dev]")
        pytest.skip(f"playwright is not importable: {exc}")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM),
                                     args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """test-artifacts/ at the repository root (git-ignored)."""
    path = Path(__file__).resolve().parents[2] / "test-artifacts"
    path.mkdir(exist_ok=True)
    return path
