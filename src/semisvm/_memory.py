"""Memory accounting: what is available, what a configuration needs, block sizes.

Every large allocation of a fit or a prediction is estimated here *before* it is
made, so that a configuration that cannot fit is refused (or switched, with
``kernel_approximation='auto'``) with a message naming the options that exist,
instead of dying inside BLAS or being killed by the OOM killer.

Available memory comes from :func:`psutil.virtual_memory` (``available``: free
plus reclaimable page cache, the figure the kernel's own OOM heuristics use).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "available_memory",
    "block_rows",
    "MemoryPlan",
    "format_bytes",
    "SAFETY_FRACTION",
    "array_bytes",
]

#: A plan is accepted when its total is at most this fraction of available memory.
SAFETY_FRACTION = 0.7

#: Default cap on one temporary block (rows x columns of a kernel or distances).
DEFAULT_BLOCK_BYTES = 128 * 2**20


def available_memory() -> int:
    """Bytes of memory available to a new allocation (psutil), or a large number.

    ``SEMISVM_MEMORY_LIMIT`` (bytes, or with a ``K``/``M``/``G`` suffix) overrides
    it: useful to test the guard, or to keep a process inside a share of a
    machine.
    """
    import os

    lim = os.environ.get("SEMISVM_MEMORY_LIMIT")
    if lim:
        mult = {"K": 2**10, "M": 2**20, "G": 2**30}.get(lim[-1].upper(), 1)
        return int(float(lim.rstrip("KMGkmg")) * mult)
    now = time.monotonic()
    if now - _LAST_READ[0] > _READ_EVERY:  # one /proc read per 0.2 s
        try:
            import psutil
        except ImportError:  # pragma: no cover - psutil is a dependency
            return 2**62
        _LAST_READ[:] = [now, int(psutil.virtual_memory().available)]
    return int(_LAST_READ[1])


#: seconds a reading of the available memory is reused (small fits ask for it
#: tens of times; a CV search thousands)
_READ_EVERY = 0.2
_LAST_READ: list[float] = [-1e9, 0]


def format_bytes(n: float) -> str:
    """Human-readable size in MiB or GiB."""
    if n >= 2**30:
        return f"{n / 2**30:.1f} GiB"
    return f"{n / 2**20:.0f} MiB"


def block_rows(
    n_cols: int,
    bytes_per_entry: int,
    *,
    cap_bytes: int = DEFAULT_BLOCK_BYTES,
    min_rows: int = 1,
    n_rows: int | None = None,
) -> int:
    """Rows of an ``(rows, n_cols)`` block of ``bytes_per_entry`` per entry.

    At most ``cap_bytes`` and at most 5% of available memory per block.
    """
    budget = min(int(cap_bytes), max(2**20, available_memory() // 20))
    rows = max(min_rows, budget // max(1, n_cols * bytes_per_entry))
    if n_rows is not None:
        rows = min(rows, max(1, n_rows))
    return int(rows)


@dataclass
class MemoryPlan:
    """Named large allocations of one configuration and a check against memory.

    Examples
    --------
    >>> plan = MemoryPlan("LapSVM fit, dense kernel")
    >>> plan.add("kernel matrix K (1000 x 1000 float64)", 1000 * 1000 * 8)
    >>> plan.total
    8000000
    """

    what: str
    items: list[tuple[str, int]] = field(default_factory=list)

    def add(self, name: str, nbytes: float) -> MemoryPlan:
        self.items.append((name, int(nbytes)))
        return self

    @property
    def total(self) -> int:
        return sum(b for _, b in self.items)

    def fits(
        self, fraction: float = SAFETY_FRACTION, available: int | None = None
    ) -> bool:
        avail = available_memory() if available is None else available
        return self.total <= fraction * avail

    def describe(self) -> str:
        lines = [f"{self.what}: {format_bytes(self.total)} in total"]
        lines += [f"  - {name}: {format_bytes(b)}" for name, b in self.items]
        return "\n".join(lines)

    def check(self, options: str, fraction: float = SAFETY_FRACTION) -> None:
        """Raise MemoryError naming the allocations and ``options`` if it does not fit."""
        avail = available_memory()
        if self.total > fraction * avail:
            raise MemoryError(
                f"{self.describe()}\nbut only {format_bytes(avail)} is available "
                f"(plans are kept under {fraction:.0%} of it). {options}"
            )


def array_bytes(*shape: int, dtype=np.float64) -> int:
    """Bytes of an array of this shape and dtype."""
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
