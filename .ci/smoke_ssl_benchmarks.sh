#!/usr/bin/env bash
# Smoke runs of the regularization-path and exact-TSVM benchmarks (--quick,
# nothing appended to the results files).  The path benchmark needs
# usps_full.npz from $SEMISVM_DATA or ../shared/data and is skipped without it.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR="${SEMISVM_DATA:-../shared/data}"
if [ -f "$DATA_DIR/usps_full.npz" ]; then
  echo "== benchmarks/bench_path.py --quick"
  python3 benchmarks/bench_path.py --quick --no-append --data-dir "$DATA_DIR" | tail -15
else
  echo "bench_path: no usps_full.npz in $DATA_DIR: skipped"
fi
echo "== benchmarks/bench_tsvm.py --quick"
python3 benchmarks/bench_tsvm.py --quick --no-write | tail -12
