"""`RunSpec`: every option of a run, declared once.

Each field carries its type, default, bounds and help text, and (through `option`) the CLI flag
that sets it, whether a stored run keeps it, whether Ray workers apply it, and what `resume`
does with it. Everything else is derived: the `aeh run` flags (`aeh.commands._spec_flags`),
the keyword arguments of `aeh.run` / `aeh.run_async` and their signature, the option list in
their docstring, the spec stored on the run (`RunConfig.spec`), and the values a resumed,
replayed or Ray-executed run is rebuilt from.

Why a `__signature__` built from the model rather than `**kwargs: Unpack[RunOptionsDict]`: a
TypedDict would be a second declaration of every option, kept equal to the model by a test,
and it cannot carry defaults, which help() and Jupyter's tooltip should show. `inspect`, pydoc,
IPython and Jupyter all read `__signature__`; only static checkers do not, and for them the
functions stay `**options: Any`, validated at the call by this model.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import tempfile
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, SkipValidation, ValidationError

from aeh.engine.adapter import Adapter
from aeh.errors import ConfigError
from aeh.suite.contract import EvalSuite

if TYPE_CHECKING:
    from aeh.engine.wiring import RunProgress

    ProgressOption: TypeAlias = RunProgress | bool | None
else:
    # The scheduler (and the store seams it loads) stays off the import of this module, which
    # `aeh --help` reads; pydantic skips validating the field, so it needs no real type.
    ProgressOption = Any

__all__ = ["DEFAULT_RETENTION", "MAX_ATTEMPTS", "MAX_CONCURRENCY", "MAX_SEED", "RunSpec", "option",
           "option_meta", "spec_docs", "spec_signature"]

#: Every (task, attempt) is scheduled up front; past this a typo (10**12) would exhaust memory.
MAX_ATTEMPTS = 10_000
MAX_CONCURRENCY = 10_000
#: Worker processes of one machine: each is an interpreter with aeh, the suite and the adapter loaded.
MAX_WORKERS = 256
#: SQLite integers are signed 64-bit.
MAX_SEED = 2**63 - 1
#: Command-adapter runs keep workspaces for inspection; this many runs' worth by default.
DEFAULT_RETENTION = 10

Resume = Literal["free", "match", "refused", "default"]
"""What `resume` does with an option: `free` takes it as given; `match` takes the stored value
and refuses a given one that differs; `refused` refuses it being given at all (the stored run
fixed it); `default` takes the stored value unless one is given."""


def option(default: Any = None, help: str = "", *, flag: str | None = None, metavar: str | None = None,
           cli_default: Any = None, choices: bool = True, group: str | None = None, resume: Resume = "free",
           stored: bool = True, worker: bool = True, fix: str = "", positional: bool = False, **bounds: Any) -> Any:
    """One run option: a pydantic `Field` whose extra metadata the CLI, `aeh.run` and resume read.

    `flag`: the `aeh run` flag (None: library only); `cli_default`: the flag's default when it is
    not the library's; `choices`: False leaves a Literal's values to the command to check;
    `stored`: kept in the run's stored spec (False for objects and secrets);
    `worker`: applied by Ray workers (False for what the driver alone resolves); `fix`: the hint
    an out-of-bounds value's error ends with; `positional`: also accepted by position in `aeh.run`.
    """
    meta = {"flag": flag, "metavar": metavar, "cli_default": cli_default, "choices": choices, "group": group,
            "resume": resume, "stored": stored, "worker": worker, "fix": fix, "positional": positional}
    return Field(default, description=help, json_schema_extra=meta, **bounds)


class RunSpec(BaseModel):
    """Every option of a run. Build it with `RunSpec.build(**options)`: unknown names and bad values
    are ConfigErrors naming the option."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    suite: SkipValidation[str | Path | EvalSuite | None] = option(
        None, "shipped name (smoke, toy_math, core, coding), entry point, or directory (required unless --resume)",
        flag="--suite", stored=False, positional=True)
    adapter: SkipValidation[str | Adapter | None] = option(
        None, "mock | react | single_shot | replay | command | an installed adapter (default mock)",
        flag="--adapter", resume="default", positional=True)
    attempts: int = option(5, "attempts per task (default 5)", flag="--attempts", resume="match", positional=True,
                           strict=True, ge=1, le=MAX_ATTEMPTS, fix="e.g. --attempts 5; split a bigger study into runs")
    concurrency: int = option(4, "attempts in flight at once (default 4)", flag="--concurrency", positional=True,
                              strict=True, ge=1, le=MAX_CONCURRENCY, fix="e.g. --concurrency 4")
    seed: int | None = option(None, "run seed; same seed, same trajectories (default: random, stamped)",
                              flag="--seed", resume="match", positional=True, strict=True, ge=0, le=MAX_SEED,
                              fix="a seed is stored as a 64-bit integer, e.g. --seed 7")
    db: SkipValidation[str | Path | None] = option(
        None, "the store (a path or an open Store; default: $AEH_DB, else the nearest runs.db)",
        stored=False, positional=True)
    resume: str | None = option(
        None, "finish a run that did not end (interrupted, killed, store failure): run only its missing "
        "attempts, with its seed, into the same run; suite, adapter and options default to the stored ones "
        "and must match them if given", flag="--resume", metavar="RUN_ID", stored=False)
    agent: SkipValidation[Callable[..., Any] | None] = option(
        None, "run your own function fn(task, tools) as the agent instead of an adapter "
        "(module:function or path/to/agent.py:function)", flag="--agent", metavar="MODULE:FN", stored=False)
    model_free: bool = option(
        False, "with --agent: the function calls no model, so attempts without reported usage cost $0 "
        "(otherwise they are unpriced)", flag="--model-free")
    model: str | None = option(None, "model name (mock: mock-strong | mock-degraded)", flag="--model",
                               resume="default")
    adapter_options: dict[str, Any] | None = option(
        None, "adapter option (repeatable), e.g. base_url=http://127.0.0.1:8089/v1 or max_output_tokens=256",
        flag="--adapter-option", metavar="KEY=VALUE", resume="default")
    max_connections: int | None = option(
        None, "model requests in flight per endpoint (default: no limit beyond --concurrency); 1 for a server "
        "that handles one request at a time — time waiting for a slot is queue time, not the agent's",
        flag="--max-connections", strict=True, ge=1)
    judge_max_connections: int | None = option(
        2, "judge requests in flight to a judge endpoint the agent does not use (default 2); on the agent's "
        "endpoint the judge shares --max-connections", flag="--judge-max-connections", strict=True, ge=1)
    tasks: list[str] | None = option(None, "only this task id (repeatable)", flag="--task", resume="match")
    fault_profile: str | Path | dict[str, Any] | None = option(
        None, "faults.yaml with tool fault rates, mode and tools", flag="--fault-profile", resume="refused")
    fault_rate: float | None = option(None, "override the profile's per-call fault rate", flag="--fault-rate",
                                      resume="refused", worker=False)
    fault_mode: Literal["uniform", "burst"] | None = option(
        None, "override the fault profile's mode", flag="--fault-mode", resume="refused", worker=False)
    judge_model: str | None = option(None, "model for the judge grader and tier-2 localization",
                                     flag="--judge-model", resume="match")
    judge_all: bool = option(
        False, "also have the judge grade every attempt (shadow: never counts toward success), so "
        "judge-agreement has attempts graded both ways", flag="--judge-all", resume="default")
    price_table: str | Path | None = option(None, "your own price table YAML (default: the shipped one)",
                                            flag="--price-table")
    redact: bool = option(True, "store traces unredacted (off by default)", flag="--no-redact")
    secrets: list[str] | None = option(None, "a value to redact from stored traces (repeatable)", flag="--secret",
                                       metavar="VALUE", stored=False)
    keep_workspaces: bool = option(False, "keep each attempt's working directory", flag="--keep-workspaces",
                                   resume="default")
    work_dir: str | Path | None = option(None, "where attempt workspaces are made (default: a temporary folder)",
                                         resume="default")
    log_level: Literal["silent", "progress", "steps", "calls", "trace"] = option(
        "silent", "silent | progress | steps | calls | trace", flag="--log-level", cli_default="progress",
        choices=False, stored=False)  # the logger names the flag and the levels
    progress: SkipValidation[ProgressOption] = option(
        None, "None: a bar in Jupyter or on a terminal, nothing elsewhere; True/False force it on/off; "
        "a RunProgress observes the run itself", stored=False)
    sinks: SkipValidation[list[Any] | None] = option(None, "span sinks that see every span (redacted)",
                                                     stored=False)
    workers: int = option(
        1, "worker processes running the attempts, each with its own event loop and its share of --concurrency; "
        "this process writes the store (default 1: attempts run in this process)", flag="--workers",
        metavar="N", worker=False, strict=True, ge=1, le=MAX_WORKERS, fix="e.g. --workers 2 (one per free core)")
    executor: Literal["local", "ray"] = option(
        "local", "where attempts run: this process (default) or Ray workers (extra aeh[ray]); this process "
        "writes the store either way", flag="--executor")
    ray_address: str | None = option(
        None, "with --executor ray: the cluster, e.g. ray://host:10001 (default: RAY_ADDRESS, else a local "
        "cluster on this machine)", flag="--ray-address", metavar="ADDR")
    ray_workers: int | None = option(
        None, "with --executor ray: worker actors, one CPU each (default: one per CPU); each runs "
        "--concurrency attempts at once", flag="--ray-workers", metavar="N", strict=True, ge=1)
    shard: str | None = option(
        None, "run only shard I of N (1-based) of the (task, attempt) plan, e.g. 1/4; needs --seed, and every "
        "shard gets one derived run id (or --run-id); join stores with `aeh merge`", flag="--shard",
        metavar="I/N", resume="refused", worker=False)
    run_id: str | None = option(
        None, "the new run's id (default: a timestamp, or for --shard one derived from suite, seed and plan)",
        flag="--run-id", worker=False)
    parent_run_id: str | None = option(None, "the run this one derives from (replays)", worker=False)
    grading_sandbox: bool = option(
        True, "run graded code WITH network (recorded on the run as grading_sandbox: disabled)",
        flag="--no-grading-sandbox", group="coding suites (--adapter command)", resume="default")
    grading_confinement: bool = option(
        True, "grade without the jail where none runs here (recorded as grading_confinement: disabled; "
        "every output marks the run unconfined)",
        flag="--no-grading-confinement", group="coding suites (--adapter command)", resume="default")
    solver_confinement: bool = option(
        True, "let the solver read the whole machine where no jail runs here (recorded as solver_confinement: "
        "disabled; every output marks the run unconfined)",
        flag="--no-solver-confinement", group="coding suites (--adapter command)", resume="default")
    workspace_retention: int | None = option(
        None, f"keep attempt workspaces of the newest N runs (command adapter default: {DEFAULT_RETENTION}; "
        "0 keeps none)", flag="--workspace-retention", metavar="N", group="coding suites (--adapter command)",
        resume="default", worker=False, strict=True, ge=0)
    fail_under: float | None = option(
        None, "exit 1 when the suite success rate is below RATE (0 to 1): a pass mark for the run itself",
        flag="--fail-under", metavar="RATE", ge=0, le=1, fix="e.g. --fail-under 0.8")
    run_card: str | Path | None = option(
        None, "write each attempt's results.json and run_card.md (verdict, public/hidden tests, hidden-set "
        "SHA-256, sandbox, reproduce command) under DIR", flag="--run-card", metavar="DIR", worker=False)
    config: dict[str, Any] | None = option(None, "extra facts recorded in the run's config", stored=False)

    @classmethod
    def build(cls, *args: Any, caller: str = "aeh.run", **options: Any) -> RunSpec:
        """The spec of these options; positional values fill the positional options in order.

        `None` for an option that cannot be None means "not given" (its default applies), so a
        caller can pass every option through. Unknown names get a did-you-mean ConfigError.
        """
        names = positional_options()
        if len(args) > len(names):
            raise ConfigError(f"{caller} takes at most {len(names)} options by position ({', '.join(names)}), "
                              f"got {len(args)} — pass the rest by name")
        for name, value in zip(names, args, strict=False):
            if name in options:
                raise ConfigError(f"{caller} got option {name!r} twice (by position and by name)")
            options[name] = value
        _refuse_unknown(options, caller)
        given = {k: v for k, v in options.items() if v is not None or _accepts_none(k)}
        try:
            return cls(**given)
        except ValidationError as exc:
            raise ConfigError("; ".join(_problem(e) for e in exc.errors())) from None

    def given(self) -> dict[str, Any]:
        """The options set explicitly (not left to their defaults)."""
        return {name: getattr(self, name) for name in self.model_fields_set}

    def stored(self) -> dict[str, Any]:
        """The options a run keeps (`RunConfig.spec`): JSON values only, no secrets."""
        out: dict[str, Any] = {}
        for name in RunSpec.model_fields:
            value = getattr(self, name)
            if not option_meta(name)["stored"] or not _plain(value):
                continue
            if name == "adapter_options" and value:
                value = {k: v for k, v in value.items() if k != "api_key"}
            out[name] = str(value) if isinstance(value, Path) else value
        return out

    def for_worker(self, fault_profile: dict[str, Any] | None) -> dict[str, Any]:
        """What a Ray worker rebuilds its run options from: the stored options it applies, with the
        fault profile as resolved here (a file path may not exist on another node)."""
        kept = {k: v for k, v in self.stored().items() if option_meta(k)["worker"]}
        return {**kept, "fault_profile": fault_profile}

    @property
    def keeps_workspaces(self) -> bool:
        """Attempt workspaces outlive the run: asked for, or kept for retention to count."""
        return self.keep_workspaces or self.workspace_retention is not None

    def retained_work_dir(self) -> Path | None:
        """Where kept workspaces live: retention counts runs there, so they share one folder."""
        if self.work_dir:
            return Path(self.work_dir)
        return Path(tempfile.gettempdir()) / "aeh-workspaces" if self.workspace_retention is not None else None

    def resumed(self, run_id: str, stored: Mapping[str, Any], *,
                skip: Iterable[str] = ()) -> tuple[RunSpec, list[str]]:
        """This spec continuing a stored run whose options are `stored`: (the spec to run, what differs).

        `match` options take the stored value (a given one that differs is a problem), `default`
        ones take it unless given; a given `refused` option is a ConfigError. `skip`: options not
        to default here (the adapter's when a function agent is given).
        """
        given = self.given()
        refused = sorted(k for k in given if option_meta(k)["resume"] == "refused")
        if refused:
            raise ConfigError(f"cannot resume run {run_id} with {', '.join(refused)}: the stored run fixed "
                              "them (a resumed run injects the faults it stored, a shard knows which shard it "
                              "is) — leave these options out")
        problems, update = [], {}
        for name, value in stored.items():
            rule = option_meta(name)["resume"] if name in RunSpec.model_fields else "free"
            if rule == "refused":
                update[name] = value
            elif rule == "match":
                if name in given and given[name] is not None and not _same(name, given[name], value):
                    problems.append(f"{name} {given[name]!r} (stored: {value!r})")
                update[name] = value
            elif rule == "default" and name not in given and name not in set(skip):
                update[name] = value
        return self.model_copy(update=update), problems


def option_meta(name: str) -> dict[str, Any]:
    """The `option` metadata of one field (flag, resume rule, …)."""
    extra = RunSpec.model_fields[name].json_schema_extra
    return dict(extra) if isinstance(extra, dict) else {}


def positional_options() -> list[str]:
    return [name for name in RunSpec.model_fields if option_meta(name)["positional"]]


def spec_signature(*, returns: Any = inspect.Signature.empty) -> inspect.Signature:
    """`aeh.run`'s signature from the spec: the positional options first, then every other by keyword."""
    hints = _hints()
    params = []
    for name, field in RunSpec.model_fields.items():
        kind = (inspect.Parameter.POSITIONAL_OR_KEYWORD if option_meta(name)["positional"]
                else inspect.Parameter.KEYWORD_ONLY)
        params.append(inspect.Parameter(name, kind, default=field.default, annotation=_shown(hints[name])))
    return inspect.Signature(params, return_annotation=returns)


def spec_docs() -> str:
    """One line per option (name, default, help) for the docstrings of `aeh.run` / `run_async`."""
    lines = []
    for name, field in RunSpec.model_fields.items():
        flag = option_meta(name)["flag"]
        cli = f" [{flag}]" if flag else ""
        lines.append(f"    {name}={field.default!r}{cli}: {field.description}")
    return "\n".join(lines)


@functools.cache
def _hints() -> dict[str, Any]:
    return typing.get_type_hints(RunSpec, include_extras=True)


def _shown(hint: Any) -> Any:
    """The annotation without pydantic's SkipValidation wrapper, as a reader should see it."""
    args = typing.get_args(hint)
    if typing.get_origin(hint) is typing.Annotated and args:
        return args[0]
    return hint


def _accepts_none(name: str) -> bool:
    return RunSpec.model_fields[name].default is None or type(None) in typing.get_args(
        _hints()[name])


def _refuse_unknown(options: Mapping[str, Any], caller: str) -> None:
    allowed = sorted(RunSpec.model_fields)
    unknown = sorted(set(options) - set(allowed))
    if not unknown:
        return
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(name, allowed, n=1)
        hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    raise ConfigError(f"{caller} got unknown option(s) {', '.join(hints)} — valid options: {', '.join(allowed)}")


def _problem(error: Any) -> str:
    """A pydantic error as `name must be …, got value — fix`, from the field's own bounds."""
    name = str(error["loc"][0]) if error["loc"] else "option"
    value = error.get("input")
    field = RunSpec.model_fields.get(name)
    if field is None:
        return f"{name}: {error['msg']}"
    bounds = {k: getattr(m, k) for m in field.metadata for k in ("ge", "le") if hasattr(m, k)}
    fix = option_meta(name)["fix"]
    tail = f", got {value!r}" + (f" — {fix}" if fix else "")
    choices = _choices(name)
    if choices:
        return f"{name} must be {' or '.join(map(repr, choices))}{tail}"
    kind = "a number" if float in _base_types(name) else "an integer" if int in _base_types(name) else None
    if kind and "ge" in bounds and "le" in bounds:
        return f"{name} must be {kind} from {bounds['ge']} to {bounds['le']}{tail}"
    if kind and "ge" in bounds:
        return f"{name} must be {kind} >= {bounds['ge']}{tail}"
    return f"{name}: {error['msg']}{tail}"


def _base_types(name: str) -> set[Any]:
    hint = _shown(_hints()[name])
    return set(typing.get_args(hint)) or {hint}


def _choices(name: str) -> tuple[Any, ...]:
    """The allowed values of a Literal option, else ()."""
    for arg in _base_types(name):
        if typing.get_origin(arg) is Literal:
            return typing.get_args(arg)
    hint = _shown(_hints()[name])
    return typing.get_args(hint) if typing.get_origin(hint) is Literal else ()


def _plain(value: Any) -> bool:
    """A value a stored spec can hold as JSON (not an adapter, store or function)."""
    if value is None or isinstance(value, str | int | float | bool | Path):
        return True
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    return isinstance(value, dict) and all(isinstance(k, str) and _plain(v) for k, v in value.items())


def _same(name: str, given: object, stored: object) -> bool:
    if name == "tasks" and isinstance(given, list | tuple) and isinstance(stored, list | tuple):
        return sorted(given) == sorted(stored)
    return bool(given == stored)
