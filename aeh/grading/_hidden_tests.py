"""The `hidden_tests` grader: grade a coding attempt without trusting its workspace.

A fresh directory is built from the fixture's intact `seed/`, overlaid with ONLY the agent's
versions of the task's entry files, plus `tests_public/` and `tests_hidden/` copied from the
fixture. Both sets run in one pytest subprocess, in its own process group with a timeout,
under the network sandbox and (where bubblewrap runs) a jail: its own PID namespace, the test
copies mounted read-only. Each test's outcome comes back over a pipe only aeh holds
(`_verdict`), checked against the exit status the process really ended with; the test copies
are hashed before and after the run. Any disagreement or change is tampering: recorded as
evidence, never counted as passing. Whatever the agent did to the tests in its workspace
changes nothing here; test files it created that look like hidden tests only raise
`tamper_suspect`.

    - kind: hidden_tests
      fixture: csv_dedup            # directory under the suite root
      entry_files: [dedup.py]
      timeout_seconds: 60
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fnmatch
import functools
import hashlib
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import Field

from aeh.errors import Problem
from aeh.grading._jail import Jail, jail_for, pid_namespace_prefix, probe_jail
from aeh.grading._preflight import grading_interpreter, install_command, module_importable, preflight_check
from aeh.grading._registry import GradeContext, GraderConfig, result_name
from aeh.grading._sandbox import Sandbox, sandbox_for
from aeh.grading._verdict import Verdict, VerdictPipe, plugin_dir, read_verdict
from aeh.models import GraderResult, Task

__all__ = ["HIDDEN_PATTERNS", "HiddenTestsConfig", "TestRun", "build_grading_dir", "hidden_like_files",
           "hidden_sha256", "run_tests", "tree_digests"]

#: File or directory names that look like hidden tests; none may ever be in a workspace.
HIDDEN_PATTERNS = ("test_hidden*", "tests_hidden")
SETS = ("tests_public", "tests_hidden")
_FAILING_SHOWN = 20
_OUTPUT_CHARS = 4000
_MAX_HASHED_BYTES = 16 * 1024 * 1024


class HiddenTestsConfig(GraderConfig):
    fixture: str = Field(min_length=1)
    """The fixture directory, relative to the suite root."""
    entry_files: list[str] = Field(min_length=1)
    """Paths relative to seed/ taken from the agent's workspace; nothing else is."""
    timeout_seconds: float = Field(60, gt=0)


def hidden_like_files(root: Path) -> list[str]:
    """Relative paths under `root` named like hidden tests (files or directories)."""
    if not root.is_dir():
        return []
    found = []
    for p in root.rglob("*"):
        if any(fnmatch.fnmatch(p.name, pat) for pat in HIDDEN_PATTERNS):
            found.append(str(p.relative_to(root)))
    return sorted(found)


def hidden_sha256(fixture: Path) -> str:
    """SHA-256 over the hidden set: every file's relative path and bytes, in sorted order."""
    h = hashlib.sha256()
    base = fixture / "tests_hidden"
    for p in sorted(q for q in base.rglob("*") if q.is_file() and "__pycache__" not in q.parts):
        h.update(str(p.relative_to(base)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def build_grading_dir(fixture: Path, dest: Path, entry_files: list[str], source: Path | None,
                      *, with_hidden: bool = True) -> dict[str, str]:
    """Seed + entry files from `source` (a workspace, or the fixture's reference/) + tests.

    Returns what happened to each entry file: `agent` (copied), `missing` (absent in the source,
    so absent here too), `rejected:<why>` (not a regular file inside the source: the seed's
    version is left out as well).
    """
    shutil.copytree(fixture / "seed", dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    taken: dict[str, str] = {}
    if source is not None:
        root = source.resolve()
        for rel in entry_files:
            target = dest / rel
            src = source / rel
            if target.exists():
                target.unlink()
            if src.is_symlink():
                taken[rel] = "rejected:symlink"
            elif not src.exists():
                taken[rel] = "missing"
            elif not src.is_file() or not src.resolve().is_relative_to(root):
                taken[rel] = "rejected:not a regular file in the workspace"
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(src.read_bytes())  # bytes only: no mode bits, no links
                taken[rel] = "agent"
    for name in SETS if with_hidden else SETS[:1]:
        if (dest / name).exists():  # the seed may not ship a tests dir; never trust one if it does
            shutil.rmtree(dest / name)
        shutil.copytree(fixture / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return taken


@dataclass
class TestRun(Verdict):
    """Per-set counts of one pytest run: {set: (passed, total)}, plus failing test ids, and the
    tampering found (`Verdict`), with how the run went."""

    timed_out: bool = False
    returncode: int | None = None
    output: str = ""
    sandbox: str = "disabled"
    isolation: str = "disabled"
    """The jail the tests ran in (`bwrap`, or why not): see `_jail`."""

    def all_passed(self, name: str) -> bool:
        k, n = self.counts.get(name, (0, 0))
        return n > 0 and k == n


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST", "LC_", "COV_", "PYTHON")) and k not in ("AEH_USAGE_FILE",)}
    env.update(TZ="UTC", LC_ALL="C.UTF-8", LANG="C.UTF-8", PYTHONHASHSEED="0",
               PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    return env


def tree_digests(root: Path) -> dict[str, str]:
    """{relative path: digest} of everything under `root`, caches included: nothing may write there.

    Regular files by SHA-256 of their bytes; links by their target and anything else (a FIFO, a
    device node) by its type, never opened: graded code may have left one to hang the reader.
    """
    if not root.is_dir():
        return {}
    found: dict[str, str] = {}
    for top, dirs, files in os.walk(root, followlinks=False):
        for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(top, d)))]:
            path = Path(top) / name
            found[str(path.relative_to(root))] = _digest(path)
    return dict(sorted(found.items()))


def _digest(path: Path) -> str:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return "link:" + os.readlink(path)
    if not stat.S_ISREG(info.st_mode):
        return f"special:{stat.S_IFMT(info.st_mode):o}"
    if info.st_size > _MAX_HASHED_BYTES:  # no test file is this big; its size is evidence enough
        return f"size:{info.st_size}"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _changes(name: str, before: dict[str, str], after: dict[str, str]) -> list[str]:
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    found = [f"{name}/{k} changed during the run" for k in changed]
    found += [f"{name}/{k} removed during the run" for k in sorted(before.keys() - after.keys())]
    found += [f"{name}/{k} created during the run" for k in sorted(after.keys() - before.keys())]
    return found


def _set_writable(workdir: Path, sets: tuple[str, ...], writable: bool) -> None:
    """Mode bits on the test copies: read-only for the run (a jail also mounts them read-only)."""
    for name in sets:
        base = workdir / name
        if not base.is_dir():
            continue
        for p in [base, *base.rglob("*")]:
            if p.is_symlink():
                continue
            dir_mode, file_mode = (0o755, 0o644) if writable else (0o555, 0o444)
            with contextlib.suppress(OSError):
                p.chmod(dir_mode if p.is_dir() else file_mode)


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(fh: IO[bytes]) -> str:
    size = fh.seek(0, os.SEEK_END)
    fh.seek(max(0, size - _OUTPUT_CHARS))
    return fh.read().decode("utf-8", "replace")[-_OUTPUT_CHARS:]


def run_tests(workdir: Path, timeout: float, sandbox: Sandbox, sets: tuple[str, ...] = SETS, *,
              jail: Jail | None = None, expected: dict[str, int] | None = None) -> TestRun:
    """Run the given test dirs of `workdir` in ONE pytest subprocess and read each test's outcome
    from a pipe only the parent holds; the tests are read-only and hashed before and after."""
    jail = probe_jail() if jail is None else jail
    run = TestRun(sandbox=sandbox.mode, isolation=jail.mode)
    before = {name: tree_digests(workdir / name) for name in sets}
    _set_writable(workdir, sets, False)
    plugins, plugin = plugin_dir()
    pipe = VerdictPipe()
    try:
        python = grading_interpreter()
        inner = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", plugin,
                 "--continue-on-collection-errors", *sets]
        if jail.active:  # the grading interpreter stays reachable wherever it lives (a venv in /tmp)
            inner = jail.wrap(inner, cwd=workdir, writable=[workdir],
                              read_only=[*(workdir / s for s in sets), plugins, Path(python).parent])
        else:  # no jail: still a PID namespace where unshare can make one
            prefix = pid_namespace_prefix()
            inner = [*prefix, *inner]
            run.isolation += "; pid namespace: " + ("unshare" if prefix else "none")
        argv = sandbox.wrap(inner)
        env = {**_env(), "PYTHONPATH": str(plugins), **pipe.env}
        with tempfile.TemporaryFile(prefix="aeh-pytest-") as out:
            proc = subprocess.Popen(argv, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True, pass_fds=pipe.fds)
            pipe.close_child_end()
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                run.timed_out = True
            finally:
                _kill_group(proc)  # nothing the graded code started outlives the grading
                proc.wait()
            run.returncode = proc.returncode
            run.output = _tail(out)
        data, complete = pipe.result(wait_s=2.0)
    finally:
        pipe.close()
        shutil.rmtree(plugins, ignore_errors=True)
        _set_writable(workdir, sets, True)
    verdict = read_verdict(data, complete or run.timed_out, run.returncode, sets, expected or {}, pipe.key)
    for f in dataclasses.fields(Verdict):
        setattr(run, f.name, getattr(verdict, f.name))
    if run.timed_out:  # a run stopped at the timeout disagrees with nothing
        run.tamper = []
    for name in sets:
        run.tamper += _changes(name, before[name], tree_digests(workdir / name))
    return run


@functools.lru_cache(maxsize=256)
def _expected_counts(fixture: str) -> dict[str, int]:
    """How many tests each set holds, collected once from the seed (for runs that crash early)."""
    fx = Path(fixture)
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="aeh-count-") as tmp:
        work = Path(tmp) / "w"
        build_grading_dir(fx, work, [], None)
        proc = subprocess.run([grading_interpreter(), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only",
                               *SETS], cwd=work, env=_env(), capture_output=True, text=True, timeout=120)
        for line in proc.stdout.splitlines():
            head = line.split("::")[0]
            for name in SETS:
                if head.startswith(name + "/") and "::" in line:
                    counts[name] = counts.get(name, 0) + 1
    return counts


def _fill_counts(fixture: Path, run: TestRun) -> None:
    """A set that did not run (timeout, crash, import error) counts 0 of its real size."""
    for name in SETS:
        run.counts.setdefault(name, (0, 0))
    short = [name for name in SETS if run.counts.get(name, (0, 0))[1] == 0 or run.collection_errors]
    if not short:
        return
    expected = _expected_counts(str(fixture.resolve()))
    for name in SETS:
        k, n = run.counts.get(name, (0, 0))
        run.counts[name] = (k, max(n, expected.get(name, 0)))


@preflight_check("hidden_tests")
def _pytest_preflight(tasks: list[Task]) -> list[Problem]:
    """The fixtures' tests run with pytest under the grading interpreter: it must import there."""
    python = grading_interpreter()
    if module_importable(python, "pytest"):
        return []
    return [Problem("grader hidden_tests", "pytest",
                    f"pytest is not importable by the grading interpreter {python}: none of the {len(tasks)} "
                    "task(s) it grades could run a test, and every attempt, the reference solution's too, "
                    "would count as a wrong answer",
                    f"install it: {install_command(python, 'pytest')}")]


_NO_PYTEST = "No module named pytest"


async def hidden_tests(cfg: HiddenTestsConfig, ctx: GradeContext) -> GraderResult:
    root = ctx.resources.get("coding_suite_root") or ctx.suite_root
    if root is None:
        raise RuntimeError("hidden_tests needs the suite root to find the fixture")
    fixture = Path(root) / cfg.fixture
    if not (fixture / "tests_hidden").is_dir():
        raise RuntimeError(f"fixture {fixture} has no tests_hidden/")
    sandbox = sandbox_for(bool(ctx.resources.get("grading_sandbox", True)))
    jail = jail_for(bool(ctx.resources.get("grading_confinement", True)))
    return await asyncio.to_thread(_grade, cfg, fixture, ctx.workspace, sandbox, jail)


def _grade(cfg: HiddenTestsConfig, fixture: Path, workspace: Path, sandbox: Sandbox,
           jail: Jail | None = None) -> GraderResult:
    tamper = hidden_like_files(workspace)
    sha = hidden_sha256(fixture)
    expected = _expected_counts(str(fixture.resolve()))
    # Outside the workspace root: a solver never sees another attempt's grading folder.
    grading = Path(tempfile.mkdtemp(prefix="aeh-grade-"))
    try:
        work = grading / "w"
        taken = build_grading_dir(fixture, work, cfg.entry_files, workspace)
        run = run_tests(work, cfg.timeout_seconds, sandbox, jail=jail, expected=expected)
        if not run.started and not run.timed_out:
            # The runner never reached its first hook, before any graded code is imported: the
            # harness's environment failed (no pytest, no interpreter), not the agent's code.
            cause = (f"pytest is not importable by the grading interpreter {grading_interpreter()} — "
                     f"install it: {install_command(grading_interpreter(), 'pytest')}"
                     if _NO_PYTEST in run.output else
                     f"the test runner never started under {grading_interpreter()}: "
                     f"{run.output.strip()[-300:] or f'exit status {run.returncode}'}")
            raise RuntimeError(cause)
        _fill_counts(fixture, run)
    finally:
        kept = _keep_next_to(workspace, grading)
    (pk, pn), (hk, hn) = run.counts["tests_public"], run.counts["tests_hidden"]
    # A result that cannot be trusted is never counted as passing.
    solved = (not run.timed_out and pn > 0 and hn > 0 and pk == pn and hk == hn
              and not run.collection_errors and run.finished and not run.tamper)
    evidence: dict[str, Any] = {
        "public_passed": pk, "public_total": pn, "hidden_passed": hk, "hidden_total": hn,
        "public": f"{pk}/{pn}", "hidden": f"{hk}/{hn}",
        "failing": run.failing[:_FAILING_SHOWN], "failing_count": len(run.failing),
        "collection_errors": run.collection_errors, "timed_out": run.timed_out,
        "pytest_exit": run.returncode, "run_finished": run.finished, "hidden_sha256": sha,
        "tamper_suspect": bool(tamper or run.tamper), "tamper_files": tamper[:50],
        "tamper_evidence": run.tamper, "grading_sandbox": run.sandbox, "grading_isolation": run.isolation,
        "verdict_channel": "pipe", "entry_files": taken,
        "grading_dir": str(kept) if kept else None, "workspace": str(workspace),
        "transcript": str(workspace.parent / f"{workspace.name}.transcript.txt"),
    }
    if not solved:
        evidence["output_tail"] = run.output[-1500:]
    return GraderResult(tier=0, kind="hidden_tests", name=result_name("hidden_tests", cfg),
                        passed=solved, evidence=evidence)


def _keep_next_to(workspace: Path, grading: Path) -> Path | None:
    """Move the grading dir beside the workspace for inspection (removed with it), without the
    hidden tests: a later attempt's solver may be able to read it."""
    target = workspace.parent / f"{workspace.name}.grading"
    try:
        shutil.rmtree(grading / "w" / "tests_hidden", ignore_errors=True)
        if target.exists():
            shutil.rmtree(target)
        shutil.move(str(grading / "w"), target)
        return target
    except OSError:
        return None
    finally:
        shutil.rmtree(grading, ignore_errors=True)
