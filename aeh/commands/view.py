"""`aeh view [--db PATH] [--port N] [--max-kernels N] [--pool-size N]`: the viewer (`aeh.view()`) served on
127.0.0.1 by Voila.

Voila runs the viewer notebook shipped in `aeh/viewer/` in a kernel of this Python and shows its
widgets without the notebook around them. The store reaches the kernel as `$AEH_DB`; the viewer
opens it read-only. Voila's `lab` template links two Font Awesome stylesheets from a CDN; the
`aeh` template shipped beside the notebook (found through `$JUPYTER_PATH`) is that template
without them, so the page makes no request off the machine.

One kernel is kept pre-heated (Voila's `preheat_kernel`: the viewer already rendered for the next
page), kernels are bounded and abandoned ones shut down (`aeh/viewer/_kernels.py`), and the
address is printed only once a kernel has rendered the viewer and the server answers — not when
the server process starts.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from aeh.errors import ExitCode

NAME = "view"
HELP = "browse every run of the store (index, scorecards, attempts, traces, compare, trajectory diffs) in a browser"

_LOOPBACK = "127.0.0.1"
#: `aeh.viewer.READY_ENV`, named here so this command does not import the viewer (ipywidgets) to start it
READY_ENV = "AEH_VIEW_READY"
#: The JupyterLab extensions a viewer page loads: Voila's widget manager and the two libraries
#: its widgets are drawn with. Voila would load every installed one (syntax themes, whatever else
#: the environment holds): scripts the page fetches and runs before its first paint, and code
#: from packages the viewer never asked for.
LAB_EXTENSIONS = ("@voila-dashboards/widgets-manager8", "@jupyter-widgets/jupyterlab-manager", "anywidget")
#: What `aeh view` needs beyond the core install: Voila (which brings the Jupyter server) and the widgets.
MODULES = ("voila", "ipywidgets", "anywidget", "ipykernel")


def add_arguments(parser: argparse.ArgumentParser, add_db: Callable[[argparse.ArgumentParser], None]) -> None:
    parser.add_argument("--port", type=int, default=8866, help="port on 127.0.0.1 to serve on (default 8866)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser; print the address only")
    parser.add_argument("--max-kernels", type=int, default=4,
                        help="kernels alive at most, the pre-heated one included; a page beyond waits, then "
                             "gets 503 (default 4)")
    parser.add_argument("--pool-size", type=int, default=1, metavar="N",
                        help="kernels kept pre-heated (the viewer already rendered) for the next pages; they "
                             "count toward --max-kernels (default 1)")
    parser.add_argument("--abandon-after", type=float, default=20.0, metavar="SECONDS",
                        help="shut down a kernel no page has been connected to for this long (default 20)")
    add_db(parser)


def voila_command(notebook: str, port: int, *, max_kernels: int = 4, abandon_after: float = 20.0,
                  pool_size: int = 1) -> list[str]:
    """The Voila command line that serves `notebook` on loopback with the offline `aeh` template,
    `pool_size` pre-heated kernels and at most `max_kernels` kernels (`BoundedKernelManager`)."""
    return [sys.executable, "-m", "voila", notebook, f"--port={port}", f"--Voila.ip={_LOOPBACK}",
            "--Voila.open_browser=False", "--template=aeh", "--theme=light",
            "--VoilaConfiguration.show_tracebacks=True", "--preheat_kernel=True", f"--pool_size={pool_size}",
            # one option per item: a list literal works too, but traitlets warns it is deprecated
            *(f"--VoilaConfiguration.extension_allowlist={name}" for name in LAB_EXTENSIONS),
            "--VoilaConfiguration.multi_kernel_manager_class=aeh.viewer._kernels.BoundedKernelManager",
            f"--BoundedKernelManager.max_kernels={max_kernels}",
            f"--BoundedKernelManager.abandon_after={abandon_after}",
            # Voila's own "running at" banner comes before any page answers: `aeh view` says it when one does
            "--Voila.log_level=WARN"]


def voila_env(db: str, ready_file: str | None = None) -> dict[str, str]:
    """This process's environment plus the store for the kernel and the template's folder (and the
    file a kernel touches once it has rendered the viewer)."""
    from importlib.resources import files

    share = str(files("aeh.viewer").joinpath("share"))
    paths = [share, *filter(None, os.environ.get("JUPYTER_PATH", "").split(os.pathsep))]
    env = {**os.environ, "AEH_DB": db, "JUPYTER_PATH": os.pathsep.join(paths)}
    if ready_file:
        env[READY_ENV] = ready_file
    return env


def _answers(url: str) -> bool:
    # here, not at the top: every `aeh` command line imports this module for its help
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2) as reply:  # noqa: S310 - our own loopback server
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def wait_until_ready(server: subprocess.Popen[bytes], ready_file: Path, port: int) -> bool:
    """True once a kernel has rendered the viewer and the server answers (a static file, so no
    kernel is spent on the check); False if the server exits first."""
    static = f"http://{_LOOPBACK}:{port}/voila/static/voila.js"
    while server.poll() is None:
        if ready_file.exists() and _answers(static):
            return True
        time.sleep(0.2)
    return False


def main(args: argparse.Namespace) -> int:
    from importlib.resources import files

    from aeh._util.optional import require_extra
    from aeh.errors import ConfigError
    from aeh.store import locate_store, open_store

    require_extra("aeh view", MODULES)
    if not 0 < args.port < 65536:
        raise ConfigError(f"--port {args.port} is not a port — pass 1–65535, e.g. --port 8866")
    location = locate_store(args.db)
    with open_store(args.db, read_only=True):  # a missing or out-of-date store is refused here, with the fix
        pass
    if args.abandon_after <= 0:
        raise ConfigError(f"--abandon-after {args.abandon_after} is not a duration — pass seconds, e.g. 20")
    if args.pool_size < 1:
        raise ConfigError(f"--pool-size {args.pool_size} keeps no kernel ready for a page — pass 1 or more")
    if args.max_kernels <= args.pool_size:
        raise ConfigError(f"--max-kernels {args.max_kernels} leaves no kernel for a page beside the "
                          f"{args.pool_size} pre-heated — pass more, e.g. --max-kernels {args.pool_size + 3}")
    notebook = str(files("aeh.viewer").joinpath("view.ipynb"))
    url = f"http://{_LOOPBACK}:{args.port}/"
    with tempfile.TemporaryDirectory(prefix="aeh-view-") as tmp:
        ready_file = Path(tmp) / "ready"
        env = voila_env(str(location.path), str(ready_file))
        print(f"aeh view: {location} — starting the viewer (the address follows once the page answers)",
              flush=True)
        command = voila_command(notebook, args.port, max_kernels=args.max_kernels, abandon_after=args.abandon_after,
                                pool_size=args.pool_size)
        server = subprocess.Popen(command, env=env)
        return _serve(server, ready_file, args.port, url, open_browser=not args.no_browser)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # a terminated `aeh view` stops its server as Ctrl-C does, leaving no orphan


def _serve(server: subprocess.Popen[bytes], ready_file: Path, port: int, url: str, *, open_browser: bool) -> int:
    import signal

    signal.signal(signal.SIGTERM, _interrupt)
    try:
        if wait_until_ready(server, ready_file, port):
            print(f"aeh view: serving on {url} (Ctrl-C stops)", flush=True)
            if open_browser:
                import webbrowser

                webbrowser.open(url)
        return ExitCode.OK if server.wait() == 0 else ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        return ExitCode.OK
