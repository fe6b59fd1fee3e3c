"""`aeh view [--db PATH] [--port N]`: the viewer (`aeh.view()`) served on 127.0.0.1 by Voila.

Voila runs the viewer notebook shipped in `aeh/viewer/` in a kernel of this Python and shows its
widgets without the notebook around them. The store reaches the kernel as `$AEH_DB`; the viewer
opens it read-only. Voila's `lab` template links two Font Awesome stylesheets from a CDN; the
`aeh` template shipped beside the notebook (found through `$JUPYTER_PATH`) is that template
without them, so the page makes no request off the machine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable

from aeh.errors import ExitCode

NAME = "view"
HELP = "browse every run of the store (index, scorecards, attempts, traces, compare, trajectory diffs) in a browser"

_LOOPBACK = "127.0.0.1"
#: What `aeh view` needs beyond the core install: Voila (which brings the Jupyter server) and the widgets.
MODULES = ("voila", "ipywidgets", "ipykernel")


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("--port", type=int, default=8866, help="port on 127.0.0.1 to serve on (default 8866)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser; print the address only")
    add_db(parser)


def voila_command(notebook: str, port: int, *, open_browser: bool) -> list[str]:
    """The Voila command line that serves `notebook` on loopback with the offline `aeh` template."""
    return [sys.executable, "-m", "voila", notebook, f"--port={port}", f"--Voila.ip={_LOOPBACK}",
            f"--Voila.open_browser={open_browser}", "--template=aeh", "--theme=light",
            "--VoilaConfiguration.show_tracebacks=True"]


def voila_env(db: str) -> dict[str, str]:
    """This process's environment plus the store for the kernel and the template's folder."""
    from importlib.resources import files

    share = str(files("aeh.viewer").joinpath("share"))
    paths = [share, *filter(None, os.environ.get("JUPYTER_PATH", "").split(os.pathsep))]
    return {**os.environ, "AEH_DB": db, "JUPYTER_PATH": os.pathsep.join(paths)}


def main(args: argparse.Namespace) -> int:
    from importlib.resources import files

    from aeh._optional import require_extra
    from aeh.errors import ConfigError
    from aeh.store import locate_store, open_store

    require_extra("aeh view", MODULES)
    if not 0 < args.port < 65536:
        raise ConfigError(f"--port {args.port} is not a port — pass 1–65535, e.g. --port 8866")
    location = locate_store(args.db)
    with open_store(args.db, read_only=True):  # a missing or out-of-date store is refused here, with the fix
        pass
    notebook = str(files("aeh.viewer").joinpath("view.ipynb"))
    env = voila_env(str(location.path))
    print(f"aeh view: {location} — serving on http://{_LOOPBACK}:{args.port}/ (Ctrl-C stops)", flush=True)
    server = subprocess.Popen(voila_command(notebook, args.port, open_browser=not args.no_browser), env=env)
    try:
        return ExitCode.OK if server.wait() == 0 else ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        return ExitCode.OK
