"""A minimal PEP 517 backend: packs `aeh_demo_suite/` and the entry points into a wheel."""

from __future__ import annotations

import base64
import hashlib
import tomllib
import zipfile
from pathlib import Path

HERE = Path(__file__).parent
PACKAGE = "aeh_demo_suite"


def _project() -> dict:
    return tomllib.loads((HERE / "pyproject.toml").read_text())["project"]


def get_requires_for_build_wheel(config_settings=None) -> list[str]:
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    project = _project()
    dist = project["name"].replace("-", "_")
    info = f"{dist}-{project['version']}.dist-info"
    files: dict[str, bytes] = {
        f"{PACKAGE}/{p.name}": p.read_bytes() for p in sorted((HERE / PACKAGE).glob("*.py"))
    }
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
        f"Summary: {project['description']}\n"
    ).encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: demo_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    lines = [f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items())
             for group, eps in project["entry-points"].items()]
    files[f"{info}/entry_points.txt"] = "\n".join(lines).encode()
    record = [
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}"
        for name, data in files.items()
    ]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    name = f"{dist}-{project['version']}-py3-none-any.whl"
    with zipfile.ZipFile(Path(wheel_directory) / name, "w") as whl:
        for arcname, data in files.items():
            whl.writestr(arcname, data)
    return name
