"""Threads the library may use besides the BLAS's own: as many as the BLAS in use.

The row-wise steps numpy and SciPy run on one thread (the kNN search's selection,
sparse products with the graph Laplacian) are split over row blocks on that many
threads; both release the GIL.  A caller's ``threadpoolctl`` limit on the BLAS
therefore limits them too, and one thread keeps them serial.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["PARALLEL_MIN_WORK", "blas_controller", "blas_threads", "map_threads"]

#: sparse products with fewer multiply-adds (stored entries x columns) than this
#: run on one thread: below it, starting the threads costs more than they save
PARALLEL_MIN_WORK = 4_000_000

T = TypeVar("T")

_controller: Any = None


def blas_controller() -> Any:
    """A cached threadpoolctl controller (None when threadpoolctl is missing)."""
    global _controller
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl comes with sklearn
            _controller = False
        else:
            _controller = ThreadpoolController()
    return _controller or None


def blas_threads() -> int:
    """Threads of the BLAS in use, read now (a ``threadpool_limits`` included):
    the smallest over the loaded BLAS libraries, 1 when none is found."""
    ctl = blas_controller()
    if ctl is None:  # pragma: no cover
        return 1
    counts = [int(c.num_threads) for c in ctl.select(user_api="blas").lib_controllers]
    return max(1, min(counts)) if counts else 1


_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()
_worker = threading.local()


def _mark_worker() -> None:
    _worker.inside = True


def _executor(threads: int) -> ThreadPoolExecutor:
    """The library's pool, kept between calls (a pool per call costs ~0.2 ms,
    paid several times in every iteration of a solver), grown on demand."""
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < threads:
            # the smaller pool is left to the collector, not shut down: another
            # thread may be about to map on it
            _pool = ThreadPoolExecutor(
                threads, thread_name_prefix="semisvm", initializer=_mark_worker
            )
            _pool_size = threads
        return _pool


def _forget_pool() -> None:  # a forked child has none of the parent's threads
    global _pool, _pool_size
    _pool, _pool_size = None, 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def map_threads(
    func: Callable[[Any], T], items: Sequence[Any], threads: int | None = None
) -> list[T]:
    """``[func(i) for i in items]`` on ``threads`` threads (default: one per
    item), in order; serial for one thread, and inside one of these threads (a
    nested map would wait on the workers it occupies)."""
    threads = len(items) if threads is None else min(threads, len(items))
    if threads < 2 or getattr(_worker, "inside", False):
        return [func(i) for i in items]
    return list(_executor(threads).map(func, items))
