"""`aeh view` as a server: its address is printed only once the page answers, the first page and
each tab are timed in Chromium, kernels stay within the cap over 100 rapid requests, and abandoned
kernels are shut down until the server is idle again. (Kernels over 20 page loads, each closed once
it painted, are counted on a 100k-attempt store by `test_viewer_100k.py`.)

The figures are printed and written to test-artifacts/viewer-serving.json (benchmarks/RESULTS.md
quotes a run)."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.browser.test_jupyterlab import _free_port
from tests.process_support import stop_process

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(1500)]

CAP = 3
ABANDON_AFTER = 6.0


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _descendants(pid: int) -> list[int]:
    tree, out, stack = _children(), [], [pid]
    while stack:
        for child in tree.get(stack.pop(), []):
            out.append(child)
            stack.append(child)
    return out


def _kernels(pid: int) -> int:
    """Kernel processes under `aeh view` (the process tree, as the machine sees it)."""
    count = 0
    for child in _descendants(pid):
        try:
            if b"ipykernel_launcher" in Path(f"/proc/{child}/cmdline").read_bytes():
                count += 1
        except OSError:
            continue
    return count


def _voila_on(port: int) -> list[int]:
    """Voila server processes serving `port` (wherever they were reparented)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"voila" in argv and f"--port={port}".encode() in argv:
                found.append(int(entry.name))
    return found


def _cpu_seconds(pids: list[int]) -> dict[int, float]:
    """CPU seconds (user + system) each live process of `pids` has used."""
    used = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            used[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            continue
    return used


def _cores_used(pid: int, seconds: float) -> float:
    """Cores `pid` and its descendants used over the next `seconds`: a process started meanwhile
    counts whole; if one ended meanwhile its last CPU is unknown, so the window counts as busy (inf)."""
    before = _cpu_seconds([pid, *_descendants(pid)])
    time.sleep(seconds)
    after = _cpu_seconds([pid, *_descendants(pid)])
    if set(before) - set(after):
        return math.inf
    return sum(used - before.get(p, 0.0) for p, used in after.items()) / seconds


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    pytest.importorskip("voila")
    import aeh

    tmp = tmp_path_factory.mktemp("viewer-serving")
    db = tmp / "runs.db"
    aeh.run("smoke", attempts=2, seed=1, db=db, progress=False)
    aeh.run("smoke", attempts=2, seed=2, db=db, model="mock-degraded", progress=False)
    port = _free_port()
    with view_server(db, port, "viewer-serving.log", "--max-kernels", str(CAP),
                     "--abandon-after", str(ABANDON_AFTER)) as (server, url, started, lines):
        yield server, url, started, lines
    deadline = time.monotonic() + 30
    while _voila_on(port) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _voila_on(port)  # a terminated `aeh view` takes its Voila server with it


@contextmanager
def view_server(db: Path, port: int, log_name: str, *options: str
                ) -> Iterator[tuple[subprocess.Popen[str], str, float, list[tuple[float, str]]]]:
    """`aeh view --db DB --port PORT --no-browser OPTIONS`, once it has said it serves: the process,
    its URL, when it started (time.monotonic) and its output lines so far with their times. Its
    output goes to test-artifacts/LOG_NAME at the end (seconds since the start: warnings, 503s)."""
    command = [str(Path(sys.executable).parent / "aeh"), "view", "--db", str(db), "--port", str(port),
               "--no-browser", *options]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[tuple[float, str]] = []
    announced = threading.Event()

    def read() -> None:
        assert server.stdout is not None
        for line in server.stdout:
            lines.append((time.monotonic(), line))
            if "serving on" in line:
                announced.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    started = time.monotonic()
    try:
        assert announced.wait(600), "aeh view never said it serves:\n" + "".join(t for _, t in lines)
        yield server, f"http://127.0.0.1:{port}/", started, lines
    finally:
        stop_process(server)
        reader.join(timeout=30)
        (Path(__file__).resolve().parents[2] / "test-artifacts" / log_name).write_text(
            "".join(f"{t - started:8.2f} {line}" for t, line in lines))
        assert server.stdout is not None
        server.stdout.close()


def _get(url: str, timeout: float) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            reply.read()
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (urllib.error.URLError, OSError):
        return 0  # timed out, or refused


def test_ready_when_announced_then_bounded_under_page_loads_and_rapid_requests(served, browser, artifacts):
    server, url, started, lines = served
    figures: dict[str, float | int | list[int]] = {}
    announced_at = next(t for t, line in lines if "serving on" in line)
    figures["start to announcement (s)"] = round(announced_at - started, 2)
    assert not any(url in line for _, line in lines if "serving on" not in line)  # no address before

    page = browser.new_page(viewport={"width": 1500, "height": 1000})
    t = time.monotonic()
    page.goto(url, wait_until="commit", timeout=120_000)
    page.locator(".aeh-open-run").first.wait_for(timeout=120_000)
    figures["first paint after the announcement (s)"] = round(time.monotonic() - t, 2)
    steps = (("run", ".aeh-suite-rate"), ("attempts", ".aeh-open-attempt"), ("trace", "iframe.aeh-trace-frame"))
    for tab, shown in steps:
        t = time.monotonic()
        if tab == "run":
            page.locator(".aeh-open-run").first.click()
        elif tab == "attempts":
            page.locator(".widget-tab .lm-TabBar-tab", has_text=re.compile(r"^attempts$")).click()
        else:
            page.locator(".aeh-open-attempt").first.click()
        page.locator(shown).first.wait_for(timeout=120_000)
        figures[f"{tab} tab (s)"] = round(time.monotonic() - t, 2)
    page.screenshot(path=str(artifacts / "viewer-serving-trace.png"), full_page=True)
    page.close()

    deadline = time.monotonic() + ABANDON_AFTER + 60  # the walk's page is closed: its kernel is let go
    while _kernels(server.pid) > 2 and time.monotonic() < deadline:
        time.sleep(1)
    figures["kernels after the walk's page closed"] = _kernels(server.pid)
    assert figures["kernels after the walk's page closed"] <= 2  # the pre-heated one, and one being refilled

    sampled: list[int] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            sampled.append(_kernels(server.pid))
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    # a health check or an impatient user: a request of / every 0.2 s, each given up after 1 s —
    # fired on the clock, not after the previous one ended, so up to 5 are in flight at once
    statuses: list[int] = []
    requests = []
    first = time.monotonic()
    for i in range(100):
        time.sleep(max(0.0, first + 0.2 * i - time.monotonic()))
        request = threading.Thread(target=lambda: statuses.append(_get(url, 1.0)), daemon=True)
        request.start()
        requests.append(request)
    for request in requests:
        request.join(timeout=30)
    assert len(statuses) == 100  # each request ended (its 1 s timeout, or an answer)
    deadline = time.monotonic() + ABANDON_AFTER + 90
    while _kernels(server.pid) > 1 and time.monotonic() < deadline:
        time.sleep(1)
    stop.set()
    sampler.join()
    figures["kernels during 100 rapid requests (max)"] = max(sampled)
    figures["statuses of 100 rapid requests (200, 503, timed out)"] = [
        statuses.count(200), statuses.count(503), statuses.count(0)]
    # a request whose client gave up while it waited at the cap gets no kernel (the server says so)
    figures["requests given no kernel: their client had left"] = sum(
        "client closed its connection" in line for _, line in lines)
    assert figures["requests given no kernel: their client had left"] > 0
    # the manager never holds more than CAP kernels; a process it has let go of may still be exiting
    # while the kernel that takes its slot starts, so the process count may touch CAP + 1 for a moment
    assert max(sampled) <= CAP + 1 and sampled.count(CAP + 1) <= 20  # ≤ 2 s of the samples
    # Back to idle: the last refused requests end and the refilled pool kernel renders the viewer,
    # then nothing runs. CPU of the server and its kernels over 5 s windows, until one is < 0.1 cores.
    # A request still queued at the cap when its client gave up may get a slot after the cull above:
    # that kernel renders, then sits idle until culled as abandoned. Idle means both: one kernel
    # left, and a 5 s window below 0.1 cores.
    # (a window in which a process ended is not counted: its CPU until the end is unknown)
    burst_end, idle, kernels = time.monotonic(), 1.0, _kernels(server.pid)
    while (idle >= 0.1 or kernels > 1) and time.monotonic() < burst_end + 90:
        idle = _cores_used(server.pid, 5)
        kernels = _kernels(server.pid)
    figures["seconds from the kernels' cull to an idle server"] = round(time.monotonic() - burst_end, 1)
    figures["kernels after the burst"] = kernels
    figures["server CPU after the burst (cores)"] = round(idle, 3)
    assert figures["kernels after the burst"] <= 1 and idle < 0.1  # back to idle: the pre-heated kernel only

    # And it still serves, also a page given a pre-heated kernel that waited in the pool longer than
    # abandon_after (that kernel was once culled between the page's request and its connection).
    for _ in range(3):
        time.sleep(ABANDON_AFTER + 1)
        page = browser.new_page()
        page.goto(url, wait_until="commit", timeout=120_000)
        page.locator(".aeh-open-run").first.wait_for(timeout=60_000)
        page.close()
    print(json.dumps(figures, indent=1))
    (artifacts / "viewer-serving.json").write_text(json.dumps(figures, indent=1))
