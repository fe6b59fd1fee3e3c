"""aeh beside `inspect view` on one of Inspect AI's own logs: time to the first painted page and
to one sample's transcript, in Chromium, for both tools on the same log and machine.

    .venv/bin/python benchmarks/inspect_view.py [--samples 40] [--epochs 2] [--runs 3] [--write]

The log is a real Inspect `eval()` written by Inspect's own code, offline: a tool-using task
(`use_tools` + `generate`, scorer `match`) on Inspect's `mockllm/model` provider with scripted
outputs (one `add` tool call, then the answer; every fifth sample answers one too many), usage
set on each output so no tokenizer is downloaded. It is imported with `aeh import inspect`.

What a user opens, timed from the command they type to what they see:
- Inspect: `inspect view start --log-dir DIR` serves its web app on 127.0.0.1; the browser opens
  the URL; first paint = the log's sample list is on screen (the first sample's input shown);
  transcript = a click on a sample, until its messages (the tool call's result) are shown.
- aeh: `aeh import inspect LOG`, then `aeh report` writes one HTML file; the browser opens the
  file; first paint = the attempts list is on screen (its first row); transcript = a click on an
  attempt, until its trace (the tool call's result) is drawn in the trace frame.

Each figure is the median of `--runs`; the two tools alternate run by run. Wall seconds: the
server's or the command's start to the moment, and the browser's part alone. Chromium is
Debian's (`/usr/bin/chromium`) driven by Playwright; the pages' requests beyond 127.0.0.1 and
the file itself are refused and counted.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings
from pathlib import Path
from typing import Any

from _results import machine, write_section

ROOT = Path(__file__).resolve().parents[1]
CPU_KEY = "commands' CPU"
CHROMIUM = "/usr/bin/chromium"
BIN = Path(sys.executable).parent


def _outputs(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
    """A scripted model: call `add` once, then answer its result (one too many for every fifth)."""
    from inspect_ai.model import ModelOutput, ModelUsage

    last = messages[-1]
    if last.role == "tool":
        first = next(m for m in messages if m.role == "user")
        wrong = int(first.text.split()[2]) % 5 == 0  # "What is N plus 3N?"
        out = ModelOutput.from_content("mockllm/model", f"The sum is {int(last.text) + (1 if wrong else 0)}.")
    else:
        numbers = [int(t) for t in last.text.replace("?", " ").split() if t.isdigit()]
        out = ModelOutput.for_tool_call("mockllm/model", "add", {"x": numbers[0], "y": numbers[1]})
    out.usage = ModelUsage(input_tokens=60, output_tokens=8, total_tokens=68)  # no tokenizer download
    return out


def make_log(folder: Path, samples: int, epochs: int) -> Path:
    """Run a real Inspect eval offline and return the `.eval` log Inspect wrote."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, system_message, use_tools
    from inspect_ai.tool import tool

    @tool
    def add() -> Any:
        async def execute(x: int, y: int) -> int:
            """Add two whole numbers.

            Args:
                x: the first number
                y: the second number
            """
            return x + y

        return execute

    dataset = [Sample(id=f"sum-{i}", input=f"What is {i} plus {3 * i}? Use the add tool.", target=str(4 * i))
               for i in range(1, samples + 1)]
    task = Task(name="tool_sums", dataset=dataset, scorer=includes(), epochs=epochs,
                solver=[system_message("You add numbers with the add tool."), use_tools([add()]), generate()])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        [log] = eval(task, model=get_model("mockllm/model", custom_outputs=_outputs), log_dir=str(folder),
                     display="none", log_format="eval")
    assert log.status == "success", log.status
    return Path(log.location.removeprefix("file://"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str, timeout: float) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            return bool(reply.status == 200)
    except OSError:
        return False


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) of a live process and its children so far, from /proc."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    for task in [pid, *_children(pid)]:
        try:
            fields = Path(f"/proc/{task}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _children(pid: int) -> list[int]:
    try:
        kids = [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    return [k for kid in kids for k in (kid, *_children(kid))]


def _guard(page: Any, allowed: tuple[str, ...]) -> list[str]:
    refused: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith(allowed):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return refused


def inspect_view_once(browser: Any, log_dir: Path, shots: Path | None = None) -> dict[str, float]:
    """`inspect view start`, the browser on its URL: first paint, then one sample's transcript."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    start = time.perf_counter()
    server = subprocess.Popen([str(BIN / "inspect"), "view", "start", "--log-dir", str(log_dir), "--host",
                               "127.0.0.1", "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        while not _answers(url, 0.5):
            if server.poll() is not None:
                raise RuntimeError(f"inspect view exited with {server.returncode}")
            time.sleep(0.05)
        answered = time.perf_counter()
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        refused = _guard(page, (url, "data:", "blob:", "about:"))
        opened = time.perf_counter()
        page.goto(url)
        # the log's samples: the first sample's input on screen
        page.get_by_text("What is 1 plus 3?", exact=False).first.wait_for(timeout=60_000)
        painted = time.perf_counter()
        if shots:
            page.screenshot(path=str(shots / "inspect-view-samples.png"))
        page.get_by_text("What is 1 plus 3?", exact=False).first.click()
        # the transcript: the model's final message (the list shows the scorer's lower-cased answer)
        page.get_by_text("The sum is 4.", exact=True).first.wait_for(timeout=60_000)
        transcript = time.perf_counter()
        if shots:
            page.screenshot(path=str(shots / "inspect-view-transcript.png"))
        page.close()
        cpu = _cpu_of(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {"command → page answers": answered - start, "first paint (browser)": painted - opened,
            "command → first paint": painted - start, "click → transcript": transcript - painted,
            "server CPU": cpu, "refused requests": float(len(refused))}


def aeh_once(browser: Any, log: Path, tmp: Path, shots: Path | None = None) -> dict[str, float]:
    """`aeh import inspect` then `aeh report`, the browser on the file: first paint, one trace."""
    db, out = tmp / f"aeh-{time.monotonic_ns()}.db", tmp / "report.html"
    env = {**os.environ, "AEH_DB": str(db)}
    start = time.perf_counter()
    before = os.times()
    subprocess.run([str(BIN / "aeh"), "import", "inspect", str(log), "--db", str(db)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    imported = time.perf_counter()
    subprocess.run([str(BIN / "aeh"), "report", "--db", str(db), "--out", str(out)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    written = time.perf_counter()
    after = os.times()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    refused = _guard(page, ("file:", "data:", "blob:", "about:"))
    opened = time.perf_counter()
    page.goto(out.as_uri())
    first = page.locator("#attempts-table tbody tr").first  # sum-1, attempt 0 (Inspect's epoch 1)
    first.wait_for(timeout=60_000)
    painted = time.perf_counter()
    if shots:
        page.screenshot(path=str(shots / "aeh-report-inspect-log.png"))
    first.click()
    trace = page.frame_locator("#aeh-att-trace")
    trace.get_by_text("The sum is 4.", exact=True).first.wait_for(timeout=60_000)  # sum-1's final message
    transcript = time.perf_counter()
    if shots:
        page.screenshot(path=str(shots / "aeh-report-inspect-transcript.png"))
    page.close()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"import": imported - start, "report": written - imported, "first paint (browser)": painted - opened,
            "command → first paint": painted - start, "click → transcript": transcript - painted,
            "commands' CPU": cpu, "refused requests": float(len(refused)), "report bytes": float(out.stat().st_size)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shots", type=Path, default=ROOT / "test-artifacts", help="where the screenshots go")
    parser.add_argument("--write", action="store_true", help="record the figures in benchmarks/RESULTS.md")
    parser.add_argument("--make-log", type=Path, metavar="DIR", help="only write the Inspect log into DIR, "
                        "print its path")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _inspect_offline import count_tokens_offline

    count_tokens_offline()
    if args.make_log:
        print(make_log(args.make_log, args.samples, args.epochs))
        return
    from playwright.sync_api import sync_playwright

    args.shots.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        log_dir = tmp / "logs"
        made = time.perf_counter()
        log = make_log(log_dir, args.samples, args.epochs)
        made = time.perf_counter() - made
        loads = [_load()]
        found: dict[str, list[dict[str, float]]] = {"inspect view": [], "aeh report": []}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM,
                                        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            try:
                for i in range(args.runs):
                    shots = args.shots if i == 0 else None
                    found["inspect view"].append(inspect_view_once(browser, log_dir, shots))
                    found["aeh report"].append(aeh_once(browser, log, tmp, shots))
            finally:
                browser.close()
        loads.append(_load())
        size = log.stat().st_size
    body = _section(found, args, made, size, loads)
    print(body)
    if args.write:
        write_section("inspect_view", body)


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def _median(rows: list[dict[str, float]], key: str) -> str:
    values = [r[key] for r in rows if key in r]
    return f"{statistics.median(values):.2f}" if values else "—"


def _section(found: dict[str, list[dict[str, float]]], args: Any, made: float, size: int, loads: list[str]) -> str:
    iv, ar = found["inspect view"], found["aeh report"]
    rows = [
        "| | `inspect view` | aeh (`aeh import inspect` + `aeh report`, the file in the browser) |",
        "| --- | ---: | ---: |",
        f"| command → page served / report written (s) | {_median(iv, 'command → page answers')} | "
        f"{_median(ar, 'import')} + {_median(ar, 'report')} |",
        f"| browser: open → first painted page (s) | {_median(iv, 'first paint (browser)')} | "
        f"{_median(ar, 'first paint (browser)')} |",
        f"| **command → first painted page (s)** | **{_median(iv, 'command → first paint')}** | "
        f"**{_median(ar, 'command → first paint')}** |",
        f"| **click a sample → its transcript (s)** | **{_median(iv, 'click → transcript')}** | "
        f"**{_median(ar, 'click → transcript')}** |",
        f"| CPU of the tool's processes (s) | {_median(iv, 'server CPU')} (server, to the transcript) | "
        f"{_median(ar, CPU_KEY)} (import + report) |",
        f"| requests beyond the page's own origin | {_median(iv, 'refused requests')} | "
        f"{_median(ar, 'refused requests')} |",
    ]
    n = args.samples * args.epochs
    return "\n".join([
        f"## inspect_view — {time.strftime('%Y-%m-%d')}", "", machine(), "",
        f"`benchmarks/inspect_view.py --samples {args.samples} --epochs {args.epochs} --runs {args.runs}`: one "
        f"real Inspect AI `eval()` log written by Inspect's own code offline ({args.samples} samples × "
        f"{args.epochs} epochs = {n} samples of a tool-using task on `mockllm/model`, {size / 1e3:.0f} kB "
        f"`.eval`, made in {made:.1f} s), opened "
        "with each tool as a user would, in Chromium (Playwright); median of the runs, the two tools "
        f"alternating. Load average (1 min) before / after: {' / '.join(loads)}.", "", *rows])


if __name__ == "__main__":
    main()
