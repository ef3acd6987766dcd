"""Threads the library may use besides the BLAS's own: as many as the BLAS in use.

The row-wise steps numpy and SciPy run on one thread (the kNN search's selection,
sparse products with the graph Laplacian) are split over row blocks on that many
threads; both release the GIL.  A caller's ``threadpoolctl`` limit on the BLAS
therefore limits them too, and one thread keeps them serial.
"""

from __future__ import annotations

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


def map_threads(func: Callable[[Any], T], items: Sequence[Any]) -> list[T]:
    """``[func(i) for i in items]`` on one thread per item (serial for one)."""
    if len(items) < 2:
        return [func(i) for i in items]
    with ThreadPoolExecutor(len(items)) as pool:
        return list(pool.map(func, items))
