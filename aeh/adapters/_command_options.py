"""The command adapter's options, declared once: its `aeh run` flags, its `aeh.run` keywords
and the run options it implies come from this model (`aeh.adapters.options`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from aeh.adapters.options import AdapterOptions, adapter_option
from aeh.engine.runspec import DEFAULT_RETENTION

__all__ = ["OUTPUT_CAP_BYTES", "CommandOptions"]

OUTPUT_CAP_BYTES = 64 * 1024
"""How much of the solver's stdout and stderr a span keeps."""


class CommandOptions(AdapterOptions):
    """What the command adapter runs and how (`aeh run --adapter command --solver CMD …`)."""

    group: ClassVar[str | None] = "coding suites (--adapter command)"
    run_options: ClassVar[tuple[str, ...]] = ("solver_confinement",)

    solver: str = adapter_option(
        "noop", "shell command run in each attempt's workspace (prompt in $AEH_PROMPT), or noop (the floor) / "
        "reference (the ceiling)", flag="--solver", required_flag=True)
    label: str | None = adapter_option(None, "the solver's name in the matrix (default: the solver)", flag="--label")
    price_in: float | None = adapter_option(
        None, "price per million input tokens (in --currency), applied to solver-reported usage", flag="--price-in",
        parse=float)
    price_out: float | None = adapter_option(
        None, "price per million output tokens (in --currency), applied to solver-reported usage",
        flag="--price-out", parse=float)
    currency: str | None = adapter_option(
        None, "the run's one currency: usage files report cost_usd or cost_eur to match (default USD)",
        flag="--currency", parse=str.upper, choices=("USD", "EUR"))
    sandbox_solver: bool = adapter_option(False, "deny the solver the network (local solvers)",
                                          flag="--sandbox-solver")
    confine_solver: bool = adapter_option(
        True, "False lets the solver read the whole machine (recorded as solver_confinement: disabled); "
        "on the command line the run option --no-solver-confinement sets it")
    timeout_s: float | None = adapter_option(None, "seconds before the solver's process group is killed",
                                             flag="--solver-timeout", metavar="SECONDS", parse=float)
    output_cap_bytes: int = adapter_option(OUTPUT_CAP_BYTES, "bytes of the solver's output a span keeps", ge=0)

    @classmethod
    def run_defaults(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """Kept workspaces, pruned to the newest DEFAULT_RETENTION runs' — unless the run keeps
        every workspace (`keep_workspaces`) or says how many (`workspace_retention`)."""
        if given.get("keep_workspaces") or given.get("workspace_retention") is not None:
            return {}
        return {"workspace_retention": DEFAULT_RETENTION}
