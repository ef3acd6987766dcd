#!/usr/bin/env bash
# Smoke test of the scale benchmark (< 2 min on 2 cores): every kernel operator
# (dense, streamed, Nystroem with uniform and k-means landmarks), exact and
# approximate kNN, LabelSpreading, and the streamed-product ratio, at small n;
# results are not saved.  Fails if any configuration errors or is refused.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
python3 benchmarks/scale/bench_scale.py --data moons manifold50 --n 2000 \
  --methods dense nystroem nystroem-kmeans labelspreading --no-save --check \
  > /tmp/smoke_scale.log 2>&1 || { tail -40 /tmp/smoke_scale.log; exit 1; }
python3 benchmarks/scale/bench_scale.py --data moons --n 1500 --methods streamed \
  --no-save --check >> /tmp/smoke_scale.log 2>&1 || { tail -40 /tmp/smoke_scale.log; exit 1; }
python3 benchmarks/scale/bench_scale.py --data manifold784 --n 2000 --graph approx --pca 20 \
  --methods nystroem --no-save --check >> /tmp/smoke_scale.log 2>&1 || {
  tail -40 /tmp/smoke_scale.log; exit 1; }
python3 benchmarks/scale/bench_scale.py --streamed-ratio --n 2000 --d 50 --no-save --check \
  >> /tmp/smoke_scale.log 2>&1 || { tail -40 /tmp/smoke_scale.log; exit 1; }
grep -E "^\| (moons|manifold)" /tmp/smoke_scale.log
echo "smoke_scale: $(( $(date +%s) - start )) s"
