"""Grading as a non-root user: what the network sandbox does there (`unshare -rn` or an honest fallback)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from tests.coding_support import REPO, LoopbackServer, mini_suite, network_fixture

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SCRIPT = """
import json, os, sys
import aeh
from aeh.grading._sandbox import probe_sandbox

base = sys.argv[1]
sandbox = probe_sandbox()
out = {"euid": os.geteuid(), "mode": sandbox.mode, "prefix": list(sandbox.prefix)}
for name in ("mini", "net"):
    table = aeh.run(f"{base}/{name}", adapter="command", attempts=1, seed=1, db=f"{base}/runs.db",
                    adapter_options={"solver": "reference"}, progress=False, work_dir=f"{base}/ws")
    out[name] = {"successes": table["successes"].tolist(),
                 "grading_sandbox": table.run.config.facts["grading_sandbox"]}
print("RESULT " + json.dumps(out))
"""


def _nonroot_python(base: Path) -> Path:
    """A venv for /usr/bin/python3 that sees this checkout and this venv's packages (via a .pth)."""
    system = Path("/usr/bin/python3")
    if not system.is_file():
        pytest.skip("no /usr/bin/python3 for the unprivileged user")
    venv = base / "venv"
    subprocess.run([str(system), "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    version = subprocess.run([str(system), "-c", "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"],
                             capture_output=True, text=True, check=True).stdout.strip()
    if version != f"{sys.version_info[0]}.{sys.version_info[1]}":
        pytest.skip(f"/usr/bin/python3 is {version}, this venv's packages are for another version")
    site = venv / "lib" / f"python{version}" / "site-packages"
    (site / "aeh_checkout.pth").write_text(f"{REPO}\n{sysconfig.get_paths()['purelib']}\n")
    return venv / "bin" / "python"


@pytest.mark.skipif(os.name != "posix" or not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="needs root to switch to an unprivileged user")
def test_grading_as_an_unprivileged_user(capsys):
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv is not installed")
    base = Path(tempfile.mkdtemp(prefix="aeh-nonroot-", dir="/tmp"))
    try:
        base.chmod(0o777)
        python = _nonroot_python(base)
        with LoopbackServer() as server:
            mini_suite(base / "mini", ("csv_dedup",))
            network_fixture(base / "net", server.port)
            (base / "probe.py").write_text(SCRIPT)
            subprocess.run(["chmod", "-R", "a+rwX", str(base)], check=True)
            env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(base), "TMPDIR": str(base),
                   "PYTHONDONTWRITEBYTECODE": "1"}
            done = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", str(python),
                                   str(base / "probe.py"), str(base)], env=env, capture_output=True, text=True,
                                  timeout=240)
            assert done.returncode == 0, done.stdout + done.stderr
            result = json.loads(done.stdout.split("RESULT ", 1)[1])
            with capsys.disabled():
                print(f"\nnon-root grading sandbox: {result['mode']} {result['prefix']}")
            assert result["euid"] == 65534
            assert result["mini"] == {"successes": [1], "grading_sandbox": result["mode"]}
            assert result["net"]["grading_sandbox"] == result["mode"]
            if result["mode"] == "unshare":
                assert result["prefix"][-1] == "-rn"  # `--net` needs root; a user namespace does not
                assert result["net"]["successes"] == [0], "graded code reached loopback as non-root"
            else:
                assert result["mode"].startswith(("fallback-off:", "unavailable"))
                assert result["net"]["successes"] == [1]  # unsandboxed, and recorded as such
    finally:
        shutil.rmtree(base, ignore_errors=True)
