"""Browser tests: Debian's Chromium driven by Playwright; required under CI=true."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
            pytest.fail(f"playwright is not importable: {exc} — install the dev extra: bash scripts/test.sh")
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

