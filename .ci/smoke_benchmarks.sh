#!/usr/bin/env bash
# Smoke test of the benchmark suite: every script's --quick mode (< 2 min each on
# 2 cores), results not appended (--no-save).  Data: $SEMISVM_DATA or ../shared/data.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts="bench_floor"
if [ -f "${SEMISVM_DATA:-../shared/data}/usps_full.npz" ]; then
  scripts="bench_floor bench_end_to_end bench_compare"
else
  echo "smoke_benchmarks: no usps_full.npz in ${SEMISVM_DATA:-../shared/data}: data-based scripts skipped"
fi
for script in $scripts; do
  echo "== benchmarks/$script.py --quick"
  start=$(date +%s)
  python3 "benchmarks/$script.py" --quick --no-save > "/tmp/smoke_$script.log" 2>&1 || {
    tail -40 "/tmp/smoke_$script.log"; exit 1; }
  tail -3 "/tmp/smoke_$script.log"
  echo "   ($(( $(date +%s) - start )) s)"
done
