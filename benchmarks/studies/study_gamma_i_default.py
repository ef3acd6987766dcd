"""Study: the standard families with another default lambda_I.

Runs ``bench_accuracy.py`` with ``semisvm._defaults.GAMMA_I`` set to
``--gamma-i`` (the normalized weight ``gamma_i="auto"`` starts from; 1.0 is the
library's default) for LapSVM and LapRLS, so that its CSV can be set beside the
standard table's (``benchmarks/results/accuracy_std.csv``, same draws).
Arguments after ``--`` go to ``bench_accuracy.py``:

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/studies/study_gamma_i_default.py --gamma-i 10 -- --only g50c --draws 5 --methods LapSVM LapRLS --csv benchmarks/results/study_gamma_i10_std.csv
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "accuracy"))


def main() -> int:
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser()
    ap.add_argument("--gamma-i", type=float, required=True)
    args = ap.parse_args(own)
    import semisvm._defaults as defaults
    from semisvm.models import _autoreg

    defaults.GAMMA_I = args.gamma_i
    _autoreg.GRID_I = (0.0, args.gamma_i)
    import bench_accuracy

    return int(bench_accuracy.main(rest) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
