"""Test-session set-up: one BLAS thread per process.

The suite's fits are small (hundreds to a few thousand points): a second BLAS
thread buys nothing on them and costs a synchronisation per call, and the tests
that start worker processes (the Dask cluster, the parallel reproduction, the
CLI) would otherwise run two BLAS threads per process on a 2-core machine.  With
one thread the README's test command takes half the time (measured in the CI
rehearsal).  The variables are set only where the user has not set them, so
that ``OPENBLAS_NUM_THREADS=2 python -m pytest`` still runs the suite with two;
child processes inherit them; ``threadpoolctl`` applies the limit to the BLAS
already loaded in this process.  Tests that compare results across processes
use rounding tolerances, never bit equality, so they hold for any thread count.
"""

from __future__ import annotations

import os

_THREAD_VARIABLES = (
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
)
for _name in _THREAD_VARIABLES:
    os.environ.setdefault(_name, "1")

from threadpoolctl import threadpool_limits  # noqa: E402

_LIMITS = threadpool_limits(limits=int(os.environ["OPENBLAS_NUM_THREADS"]))
