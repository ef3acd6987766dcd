#!/usr/bin/env bash
# Smoke run of the Dask benchmark: a 2-worker LocalCluster against the in-process run
# at n = 4,000 (about a minute on 2 cores); results not appended.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
python3 benchmarks/dask/bench_dask.py --quick > /tmp/smoke_dask.log 2>&1 || {
  tail -40 /tmp/smoke_dask.log; exit 1; }
grep -E "^\| 4000" /tmp/smoke_dask.log
echo "   ($(( $(date +%s) - start )) s)"
