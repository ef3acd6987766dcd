"""Study: the accuracy tables with another default graph weight.

Runs ``bench_accuracy.py`` with ``semisvm._defaults.GAMMA_I`` set to
``--gamma-i`` (the normalized weight ``gamma_i="auto"`` starts from; 1.0 is the
library's default) and/or ``semisvm.models._adaptive.GRAPH_MEAN_POINTS`` set to
``--graph-mean-points`` (0: the graph term averaged over every n, the rule before
it had a cap) for LapSVM and LapRLS, so that its CSV can be set beside the
table's (same draws).  Arguments after ``--`` go to ``bench_accuracy.py``:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/studies/study_gamma_i_default.py --gamma-i 10 -- --only g50c --draws 5 --methods LapSVM LapRLS --csv benchmarks/results/study_gamma_i10_std.csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from study_option_default import run_benchmark, split_args  # noqa: E402


def main() -> int:
    own, rest = split_args(sys.argv[1:])
    ap = argparse.ArgumentParser()
    ap.add_argument("--gamma-i", type=float, default=None)
    ap.add_argument("--graph-mean-points", type=int, default=None)
    args = ap.parse_args(own)
    import semisvm._defaults as defaults
    from semisvm.models import _adaptive, _autoreg

    if args.gamma_i is not None:
        defaults.GAMMA_I = args.gamma_i
        _autoreg.GRID_I = (0.0, args.gamma_i)
    if args.graph_mean_points is not None:
        _adaptive.GRAPH_MEAN_POINTS = args.graph_mean_points or 2**62
    return run_benchmark(rest)


if __name__ == "__main__":
    raise SystemExit(main())
