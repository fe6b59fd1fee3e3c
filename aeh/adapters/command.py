"""The `command` adapter: any shell command as the solver of a coding task.

The command runs in the attempt's workspace (seed/ + tests_public/ + PROMPT.md), with the prompt
also in `$AEH_PROMPT` and the files it is expected to change in `$AEH_ENTRY_FILES` (a JSON
list), in its own process group so a timeout kills it and every child, and confined to its
workspace (`_confine`: the suite, its reference and hidden tests, other workspaces and the temp
dirs are out of its sight) by bubblewrap or `unshare`; where neither runs the adapter refuses to
start unless confinement was turned off on purpose (`confine_solver=False`). Its stdout and stderr
(each capped) become a span and `<workspace>.transcript.txt`. A solver may
report usage as JSON in `$AEH_USAGE_FILE` (`tokens_in`, `tokens_out`, and `cost_usd` or
`cost_eur`); with `price_in`/`price_out` (per million tokens, in the run's currency) the cost is
computed from the tokens. A run keeps one currency: `currency` when given, else the one its usage
files report (the first report decides; USD when none reports a cost). A usage file that reports
its cost in the other currency is a harness error naming the fix, never a silently unpriced or
mixed total.
Either way the figures are marked `solver-reported`: they come from the process under evaluation.

A process that fails for reasons outside the task (command not found or not executable, a missing
API key on its stderr, a non-zero exit without any change to the workspace, such as a traceback at
start-up) is a harness error with its exit status and stderr tail (`_solver_failure`), never a
wrong answer: a run where that happens on every attempt is not a valid measurement (exit 3).

Two built-in solvers need no command: `noop` (changes nothing: the floor) and `reference`
(copies the fixture's reference entry files: the ceiling; the only one handed the answer key).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Any

from aeh._util.files import load_json_file
from aeh.adapters._command_options import OUTPUT_CAP_BYTES, CommandOptions
from aeh.adapters._confine import confined_argv, confinement_mode, solver_jail
from aeh.adapters._solver_failure import environment_failure, workspace_fingerprint
from aeh.engine.context import AttemptContext
from aeh.errors import AdapterError
from aeh.grading import Sandbox, no_jail_message, probe_sandbox
from aeh.models import AgentOutcome, RunConfig, Task
from aeh.store import Redactor

__all__ = ["BUILTIN_SOLVERS", "CommandAdapter", "OUTPUT_CAP_BYTES"]

BUILTIN_SOLVERS = ("noop", "reference")
#: The currencies a usage file may report a cost in: the key it uses for each.
CURRENCIES = {"USD": "cost_usd", "EUR": "cost_eur"}
ROLES = {"noop": "floor", "reference": "ceiling"}


class CommandAdapter:
    """Run `solver` (a shell command, or `noop` / `reference`) once per attempt."""

    name = "command"

    options_model = CommandOptions

    def __init__(self, model: str | None = None, **options: Any) -> None:
        self.options: CommandOptions = CommandOptions.parse(self.name, options)
        solver, label, currency = self.options.solver, self.options.label, self.options.currency
        price_in, price_out = self.options.price_in, self.options.price_out
        if not isinstance(solver, str) or not solver.strip():
            raise AdapterError("the command adapter needs --solver CMD (or noop / reference)")
        if (price_in is None) != (price_out is None):
            raise AdapterError("give both --price-in and --price-out (per million tokens), or neither")
        if currency is not None and str(currency).upper() not in CURRENCIES:
            raise AdapterError(f"--currency must be one of {', '.join(CURRENCIES)}, got {currency!r}")
        self.fixed_currency = None if currency is None else str(currency).upper()
        self._reported_currency: str | None = None  # the first usage file's, when the run follows them
        for value, flag in ((price_in, "--price-in"), (price_out, "--price-out")):
            if value is not None and float(value) < 0:
                raise AdapterError(f"{flag} must not be negative, got {value}")
        self.solver = solver.strip()
        self.builtin = self.solver if self.solver in BUILTIN_SOLVERS else None
        self.label = str(label or model or (self.builtin or _short(self.solver)))
        self.model = self.label  # the matrix and the run list name the solver by this
        self.role = ROLES.get(self.builtin or "", "solver")
        self.price_in = None if price_in is None else float(price_in)
        self.price_out = None if price_out is None else float(price_out)
        self.sandbox_solver = self.options.sandbox_solver
        self.timeout_s = self.options.timeout_s
        self.output_cap = self.options.output_cap_bytes
        self._sandbox: Sandbox | None = None
        self.confine_solver = self.options.confine_solver
        self._jail = solver_jail(self.confine_solver and not self.builtin)
        # Only the ceiling copies the fixture's reference: it alone is handed the answer key.
        self.uses_answer_key = self.builtin == "reference"

    def preflight(self) -> None:
        self._require_jail()
        if self.sandbox_solver and not self.builtin:
            self._sandbox = probe_sandbox()
            if not self._sandbox.active:
                raise AdapterError(f"--sandbox-solver: no network sandbox here ({self._sandbox.mode}); "
                                   "run without --sandbox-solver to give the solver the network")

    def _require_jail(self) -> None:
        """Fail closed: a solver that should be confined never runs where no jail does."""
        if self.confine_solver and not self.builtin and not self._jail.active:
            raise AdapterError(no_jail_message("the solver", "--no-solver-confinement", self._jail))

    @property
    def currency(self) -> str:
        """The run's currency: as given, else as the usage files report it, else USD."""
        return self.fixed_currency or self._reported_currency or "USD"

    def run_config(self) -> dict[str, Any]:
        return {"solver": self.solver, "solver_label": self.label, "solver_role": self.role,
                "cost_provenance": "none (built-in solver)" if self.builtin else "solver-reported",
                "solver_sandbox": "unshare" if self.sandbox_solver and not self.builtin else "off",
                **self.final_config(),
                "solver_confinement": confinement_mode(self._jail, self.builtin is not None)}

    def continue_run(self, config: RunConfig, *, distributed: bool = False) -> None:
        """Before the run: a resumed run keeps the currency its usage files set. Workers elsewhere
        (Ray) could not agree on the first report, so there the currency must be given."""
        if self.fixed_currency is not None or self.builtin:
            return
        if distributed:
            raise AdapterError("with --executor ray the command adapter needs --currency USD or --currency EUR: "
                               "workers on other machines cannot agree on the currency the first usage file reports")
        if config.facts.get("cost_currency_source") == "the usage files" and config.cost_currency in CURRENCIES:
            self._reported_currency = config.cost_currency

    def final_config(self) -> dict[str, Any]:
        """What the run learns while it goes and records when it ends: its currency, when it
        follows the usage files (`cost_currency_source` says which)."""
        source = ("--currency" if self.fixed_currency else "the usage files" if self._reported_currency
                  else "default (no usage file reported a cost)")
        return {"cost_currency": self.currency, "cost_currency_source": source}

    async def run(self, task: Task, ctx: AttemptContext) -> AgentOutcome:
        coding = task.metadata.get("coding")
        if not coding:
            raise AdapterError(f"task {task.id!r} is not a coding fixture; the command adapter runs coding suites")
        if self.builtin == "noop":
            _write_transcript(ctx.workspace, "noop: the workspace was left as prepared\n")
            self._usage(ctx, None, builtin=True)
            return AgentOutcome(final_output="noop", status="answered")
        if self.builtin == "reference":
            key = ctx.answer_key
            suite = (key.resources.get("coding_suite_root") or key.suite_root) if key is not None else None
            if suite is None:
                raise AdapterError("the reference solver needs the suite's fixtures (no answer key was given)")
            root = Path(suite) / coding["fixture"] / "reference"
            for rel in coding["entry_files"]:
                target = ctx.workspace / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(root / rel, target)
            _write_transcript(ctx.workspace, f"reference: copied {', '.join(coding['entry_files'])}\n")
            self._usage(ctx, None, builtin=True)
            return AgentOutcome(final_output="reference", status="answered")
        return await self._run_command(task, ctx)

    async def _run_command(self, task: Task, ctx: AttemptContext) -> AgentOutcome:
        self._require_jail()
        timeout = self.timeout_s or max(1.0, task.budget.timeout_s * 0.95)
        usage_dir = Path(tempfile.mkdtemp(prefix="aeh-usage-"))
        usage_file = usage_dir / "usage.json"
        env = {**os.environ, "AEH_PROMPT": task.prompt, "AEH_USAGE_FILE": str(usage_file),
               "AEH_TASK_ID": task.id, "AEH_ATTEMPT": str(ctx.attempt), "AEH_SEED": str(ctx.seed),
               "AEH_WORKSPACE": str(ctx.workspace),
               "AEH_ENTRY_FILES": json.dumps(task.metadata["coding"]["entry_files"])}
        before = workspace_fingerprint(ctx.workspace)
        argv = confined_argv(["/bin/sh", "-c", self.solver], self._jail, workspace=ctx.workspace,
                             writable=[usage_dir], hide=list(ctx.private_paths))
        if self.sandbox_solver:
            if self._sandbox is None:
                self.preflight()
            assert self._sandbox is not None  # preflight() probed it or raised
            argv = self._sandbox.wrap(argv)
        try:
            with ctx.recorder.span("solver:command", "tools", command=self.solver, label=self.label,
                                   workspace=str(ctx.workspace), timeout_s=timeout,
                                   network="denied" if self.sandbox_solver else "allowed",
                                   confinement=self._jail.mode) as span:
                result = await _run_capped(argv, ctx.workspace, env, timeout, self.output_cap)
                span.set(exit_code=result["exit_code"], timed_out=result["timed_out"],
                         stdout=result["stdout"], stderr=result["stderr"],
                         stdout_bytes=result["stdout_bytes"], stderr_bytes=result["stderr_bytes"],
                         truncated=result["truncated"], latency_s=result["latency_s"])
                if result["timed_out"] or result["exit_code"] != 0:
                    span.fail(f"solver exit {result['exit_code']}" if not result["timed_out"]
                              else f"solver timed out after {timeout:g}s")
            _write_transcript(ctx.workspace, _transcript(self.solver, result))
            usage = _read_usage(usage_file)
            mixed = self._currency_clash(usage)
            if mixed is not None:  # one run, one currency: a mixed total would mean nothing
                self._usage(ctx, {"error": mixed})
                return AgentOutcome(status="harness_error", error=mixed)
            self._usage(ctx, usage)
        finally:
            shutil.rmtree(usage_dir, ignore_errors=True)
        if result["timed_out"]:
            return AgentOutcome(status="budget_exhausted",
                                error=f"solver timed out after {timeout:g}s; its process group was killed")
        failure = environment_failure(result, changed=workspace_fingerprint(ctx.workspace) != before,
                                      workspace=ctx.workspace)
        if failure is not None:  # the process failed for reasons outside the task
            return AgentOutcome(status="harness_error", error=failure)
        return AgentOutcome(final_output=f"exit {result['exit_code']}", status="answered")

    def _currency_clash(self, usage: dict[str, Any] | None) -> str | None:
        """Why this usage report cannot be taken into the run's one currency, or None (the first
        report of a run that follows them sets it). A cost computed from --price-in/--price-out
        does not use the reported one, so it cannot clash."""
        reported = [cur for cur, key in CURRENCIES.items() if usage is not None and usage.get(key) is not None]
        if not reported or self.price_in is not None:
            return None
        if self.fixed_currency is not None:
            return _other_currency(usage, self.fixed_currency)
        if self._reported_currency is None:
            self._reported_currency = reported[0]
            return None
        if reported[0] != self._reported_currency:
            key, other = CURRENCIES[reported[0]], self._reported_currency
            return (f"usage file reports {key} but this run's earlier usage files reported {CURRENCIES[other]}: "
                    f"one run keeps one currency — have the solver report {CURRENCIES[other]} every time, or "
                    f"pass --currency {reported[0]} or --currency {other} to fix it (a report in the other is "
                    "then refused)")
        return None

    def _usage(self, ctx: AttemptContext, usage: dict[str, Any] | None, *, builtin: bool = False) -> None:
        """Record the solver's usage and cost on a `model` span (or nothing, for built-ins)."""
        attrs: dict[str, Any] = {"gen_ai.response.model": self.label}
        tin = tout = 0
        cost: float | None
        if builtin:
            cost, provenance = 0.0, "built-in solver: no model"
        elif usage is None:
            cost, provenance = None, "solver-reported: no usage file"
        elif "error" in usage:
            cost, provenance = None, f"solver-reported: unreadable usage file ({usage['error']})"
        else:
            tin, tout = usage.get("tokens_in", 0), usage.get("tokens_out", 0)
            if self.price_in is not None and self.price_out is not None:
                cost = (tin * self.price_in + tout * self.price_out) / 1e6
                provenance = "solver-reported tokens × --price-in/--price-out"
            elif usage.get(CURRENCIES[self.currency]) is not None:
                key = CURRENCIES[self.currency]
                cost, provenance = float(usage[key]), f"solver-reported {key}"
            else:
                cost, provenance = None, "solver-reported tokens, no price given"
            attrs["reported"] = usage
        attrs.update({"gen_ai.usage.input_tokens": tin, "gen_ai.usage.output_tokens": tout,
                      "cost_usd": cost, "priced": cost is not None, "cost_provenance": provenance})
        ctx.recorder.event("solver:usage", "model", **attrs)
        ctx.budget.add_usage(self.label, tin, tout, cost)


def _short(command: str) -> str:
    return command if len(command) <= 40 else command[:37] + "..."


#: A usage report is a few numbers; the solver (the code under evaluation) writes it, so it is read bounded.
_USAGE_MAX_BYTES = 64 * 1024


def _read_usage(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:  # strict and bounded: no FIFO, device, huge file, NaN, Infinity or duplicate key
        data, _ = load_json_file(path, max_bytes=_USAGE_MAX_BYTES)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        out: dict[str, Any] = {}
        for key in ("tokens_in", "tokens_out"):
            value = data.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{key} must be a non-negative integer, got {value!r}")
            out[key] = value
        for key in CURRENCIES.values():
            cost = data.get(key)
            if cost is not None:
                if isinstance(cost, bool) or not isinstance(cost, int | float) or cost < 0:
                    raise ValueError(f"{key} must be a non-negative number, got {cost!r}")
                out[key] = float(cost)
        if len([k for k in CURRENCIES.values() if k in out]) > 1:
            raise ValueError("reports its cost in more than one currency (cost_usd and cost_eur): report one")
        return out
    except (OSError, ValueError) as exc:
        return {"error": str(exc)[:200]}


def _other_currency(usage: dict[str, Any] | None, currency: str) -> str | None:
    """Why a usage report priced in another currency than the run's is refused, or None."""
    for other, key in CURRENCIES.items():
        if other != currency and usage is not None and usage.get(key) is not None:
            return (f"usage file reports {key} but this run is priced in {currency}: one run keeps one "
                    f"currency — pass --currency {other} (prices and costs in {other}), or have the solver "
                    f"report {CURRENCIES[currency]}")
    return None


async def _drain(stream: asyncio.StreamReader, cap: int) -> tuple[bytes, int]:
    kept, total = bytearray(), 0
    while chunk := await stream.read(65536):
        total += len(chunk)
        if len(kept) < cap:
            kept += chunk[: cap - len(kept)]
    return bytes(kept), total


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _run_capped(argv: list[str], cwd: Path, env: dict[str, str], timeout: float,
                      cap: int) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    started = loop.time()
    proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE, start_new_session=True)
    readers = [asyncio.ensure_future(_drain(proc.stdout, cap)),  # type: ignore[arg-type]
               asyncio.ensure_future(_drain(proc.stderr, cap))]  # type: ignore[arg-type]
    timed_out = False
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        timed_out = True
    finally:
        # The whole group: children a solver left behind (or a cancelled attempt's) die too.
        _kill_group(proc.pid)
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
    await proc.wait()
    done, pending = await asyncio.wait(readers, timeout=5)
    for task in pending:
        task.cancel()
    (out, out_n), (err, err_n) = [r.result() if r in done else (b"", 0) for r in readers]
    return {"exit_code": proc.returncode, "timed_out": timed_out, "latency_s": loop.time() - started,
            "stdout": out.decode("utf-8", "replace"), "stderr": err.decode("utf-8", "replace"),
            "stdout_bytes": out_n, "stderr_bytes": err_n, "truncated": out_n > cap or err_n > cap}


def _transcript(command: str, r: dict[str, Any]) -> str:
    note = " (truncated)" if r["truncated"] else ""
    return (f"$ {command}\nexit {r['exit_code']}{' (timed out, group killed)' if r['timed_out'] else ''}"
            f" after {r['latency_s']:.2f}s\n\n--- stdout ({r['stdout_bytes']} bytes){note} ---\n{r['stdout']}"
            f"\n--- stderr ({r['stderr_bytes']} bytes){note} ---\n{r['stderr']}\n")


def _write_transcript(workspace: Path, text: str) -> None:
    """Beside the workspace, never in it; redacted like the stored spans."""

    text = Redactor().redact_text(text)
    (workspace.parent / f"{workspace.name}.transcript.txt").write_text(text, encoding="utf-8")
