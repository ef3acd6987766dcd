r"""Predicted fit time of the dense and the block kernel operators on this machine.

``kernel_approximation='auto'`` with PCG chooses between the exact dense K and
the block operator (:class:`~semisvm.kernels.BlockResidualOperator`: Nyström
plus the exact kernel within k-means blocks) by what each would cost here.  A
fit is its kernel (flops) and :math:`I` PCG products (bytes read):

.. math::
    t_{dense} &= \frac{2 n^2 d}{G} + I\,\frac{n^2 s}{B}, \\
    t_{blocks} &= \frac{2 n m (d + m) + 2 n \bar b d}{G}
                  + I\,\frac{8 n m + 8 n \bar b}{B},

with G the measured GEMM rate, B the measured memory read bandwidth, s the
bytes of one kernel entry, m the landmarks, :math:`\bar b = 1.5 b` the mean
block a point sees (k-means blocks of b points on average are uneven) and
:math:`I = 2\lceil\sqrt n / 2\rceil + 10` (the stability rule's two checks and
the start's products).  Both products are bandwidth-bound: the float32 factor
read twice and the float64 residual blocks, against the whole K.

The dense K is the exact model, the block operator an approximation of it, so
the dense one is kept unless the blocks save **both** half the time and a
second (:data:`MIN_RATIO`, :data:`MIN_SAVING`): at small n the exact model
costs little either way.  The rates are measured once per process and rounded
to powers of two, so that timing noise does not change the choice between two
runs of the same fit.
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any

import numpy as np

__all__ = ["MIN_RATIO", "MIN_SAVING", "machine_rates", "predicted_seconds", "cheaper"]

#: the blocks are chosen when the dense fit is predicted this many times slower
MIN_RATIO = 2.0
#: ... and slower by at least this many seconds
MIN_SAVING = 1.0
#: the mean block a point sees, in units of ``block_size``
UNEVEN_BLOCKS = 1.5


def _pow2(x: float) -> float:
    return float(2.0 ** round(math.log2(max(x, 1.0))))


@functools.lru_cache(maxsize=1)
def machine_rates() -> dict[str, float]:
    """GEMM rate (flop/s, float64) and memory read bandwidth (bytes/s) of this
    process, measured once (about 0.1 s) and rounded to powers of two."""
    from ..kernels._operators import single_blas_thread

    rng = np.random.default_rng(0)
    A = rng.standard_normal((768, 768))
    big = np.ones(8 * 2**20)  # 64 MiB: past the caches
    with single_blas_thread():
        A @ A
        t = min(_seconds(lambda: A @ A) for _ in range(3))
    gemm = 2 * 768**3 / t
    big.sum()
    t = min(_seconds(big.sum) for _ in range(3))
    return {"gemm": _pow2(gemm), "bandwidth": _pow2(big.nbytes / t)}


def _seconds(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def pcg_products(n: int) -> int:
    """The products a default PCG fit makes: two stability checks every
    :math:`\\lceil\\sqrt n/2\\rceil` iterations, and ten for its start."""
    return 2 * math.ceil(math.sqrt(n) / 2) + 10


def predicted_seconds(
    kind: str,
    *,
    n: int,
    d: int,
    itemsize: int,
    n_components: int,
    block_size: int,
    rates: dict[str, float],
) -> float:
    """Predicted seconds of the kernel and the PCG products (module docstring)."""
    G, B = rates["gemm"], rates["bandwidth"]
    products = pcg_products(n)
    if kind == "dense":
        return 2.0 * n * n * d / G + products * n * n * itemsize / B
    if kind == "blocks":
        m = min(n_components, n)
        b = min(UNEVEN_BLOCKS * block_size, n)
        setup = (2.0 * n * m * (d + m) + 2.0 * n * b * d) / G
        return setup + products * (8.0 * n * m + 8.0 * n * b) / B
    raise ValueError(kind)  # pragma: no cover - callers pass the two kinds


def cheaper(
    *,
    n: int,
    d: int,
    itemsize: int,
    n_components: int,
    block_size: int,
    rates: dict[str, float] | None = None,
) -> tuple[str, dict]:
    """``'dense'`` or ``'blocks'`` for a PCG fit both fit in memory, and the
    evidence: predicted seconds of each and the reason."""
    rates = machine_rates() if rates is None else rates
    kw = dict(
        n=n,
        d=d,
        itemsize=itemsize,
        n_components=n_components,
        block_size=block_size,
        rates=rates,
    )
    t = {k: predicted_seconds(k, **kw) for k in ("dense", "blocks")}  # type: ignore[arg-type]
    saves = t["dense"] >= MIN_RATIO * t["blocks"] and (
        t["dense"] - t["blocks"] >= MIN_SAVING
    )
    kind = "blocks" if saves else "dense"
    reason = f"predicted {t['dense']:.2g} s dense, {t['blocks']:.2g} s blocks: " + (
        "the blocks save half the time and a second"
        if saves
        else "the exact dense K (the blocks would not save half and a second)"
    )
    return kind, {"predicted_seconds": t, "rates": dict(rates), "reason": reason}
