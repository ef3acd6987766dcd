"""Cost of K @ V with V of 1 vs 10 columns.

Prints milliseconds per product for several layouts; run with
``nice python benchmarks/studies/bench_gemm_columns.py [n]``.
"""

import sys
import time

import numpy as np


def _time(a, b, repeat=5):
    def f():
        return a @ b

    f()
    t = time.perf_counter()
    for _ in range(repeat):
        f()
    return (time.perf_counter() - t) / repeat * 1e3


def main(n=8000):
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64):
        K = rng.random((n, n), dtype=dt)
        v1 = rng.random((n, 1), dtype=dt)
        v10 = rng.random((n, 10), dtype=dt)
        v10t = np.ascontiguousarray(v10.T)
        one = _time(K, v1)
        ten = _time(K, v10)
        trick = _time(v10t, K)
        print(
            f"{dt.__name__} n={n}: 1 col {one:.1f} ms, 10 cols {ten:.1f} ms "
            f"(ratio {ten / one:.2f}), V.T@K {trick:.1f} ms"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 8000)
