"""`aeh` ends quickly (no interpreter teardown) yet does all an exit must: code, output, exit handlers."""

import subprocess
import sys
import textwrap
from pathlib import Path

import aeh


def _console(tmp_path: Path, argv: list[str], extra: str = "") -> subprocess.CompletedProcess[str]:
    marker = tmp_path / "atexit-ran"
    code = textwrap.dedent(f"""
        import atexit, sys
        from aeh.cli import console
        atexit.register(lambda: open({str(marker)!r}, "w").write("ran"))
        print("buffered, no newline", end="")
        {extra}
        sys.argv = ["aeh", *{argv!r}]
        console()
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_a_command_exits_with_its_code_its_output_flushed_and_exit_handlers_run(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    aeh.run("smoke", attempts=1, db=db, progress=False)
    done = _console(tmp_path, ["runs", "--db", str(db)])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("buffered, no newline") and "smoke" in done.stdout
    assert (tmp_path / "atexit-ran").read_text() == "ran"

    missing = _console(tmp_path, ["runs", "--db", str(tmp_path / "none.db")])
    assert missing.returncode == 2 and "no run store" in missing.stderr


def test_a_live_non_daemon_thread_gets_the_ordinary_exit_that_waits_for_it(tmp_path: Path) -> None:
    out = tmp_path / "thread-finished"
    worker = (f"import threading, time; threading.Thread(target=lambda: (time.sleep(0.5), "
              f"open({str(out)!r}, 'w').write('done'))).start()")
    done = _console(tmp_path, ["runs", "--db", str(tmp_path / "none.db")], extra=worker)
    assert done.returncode == 2
    assert out.read_text() == "done"
    assert (tmp_path / "atexit-ran").read_text() == "ran"
