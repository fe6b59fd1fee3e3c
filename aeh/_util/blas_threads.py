"""One BLAS thread for a command whose arithmetic is small.

numpy's OpenBLAS (and scipy's own copy) starts a server thread per core when it loads, and that
thread spins (`sched_yield`) for about a tenth of a second after loading and after each BLAS call,
waiting for more work. A report's arithmetic is intervals and tests over vectors of a few thousand
numbers, which no second thread speeds up: in `aeh report` the spinning thread was 5–9 % of the
process's CPU (perf: `blas_thread_server`, ~0.1 s of a core × 5 report on 2 cores). `aeh view`
keeps OpenBLAS's default: its kernels' arithmetic over a 100k-attempt store uses the second thread
(with one, the first page painted 0.2 s later).

OpenBLAS reads its thread count once, when the library loads, so this must run before numpy is
imported; afterwards it changes nothing. A count the user set (`OPENBLAS_NUM_THREADS`) is kept.
"""

from __future__ import annotations

import os

__all__ = ["BLAS_THREADS_ENV", "one_blas_thread"]

#: The variable OpenBLAS reads at load for its thread count.
BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


def one_blas_thread() -> None:
    """Ask OpenBLAS, when it loads later in this process (and in its children), for one thread,
    unless the user chose a count."""
    os.environ.setdefault(BLAS_THREADS_ENV, "1")
