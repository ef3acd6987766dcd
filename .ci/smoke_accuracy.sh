#!/usr/bin/env bash
# Smoke run of the accuracy benchmark: three small cells (two moons
# n=200 with 1 label per class, iris and wine with 5), three label draws, every
# method, then the CV cost measurement at n=400; nothing appended (--no-save).
# Needs no data directory.  Under 3 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
python3 benchmarks/accuracy/bench_accuracy.py --quick --no-save > /tmp/smoke_accuracy.log 2>&1 || {
  tail -40 /tmp/smoke_accuracy.log; exit 1; }
grep -A12 "Wins / ties" /tmp/smoke_accuracy.log
python3 benchmarks/accuracy/bench_accuracy.py --quick --cost --no-save > /tmp/smoke_accuracy_cost.log 2>&1 || {
  tail -40 /tmp/smoke_accuracy_cost.log; exit 1; }
tail -4 /tmp/smoke_accuracy_cost.log
if grep -q "error:" /tmp/smoke_accuracy.log; then
  echo "smoke_accuracy: a method raised (see the Notes above)"; grep "error:" /tmp/smoke_accuracy.log; exit 1
fi
echo "   ($(( $(date +%s) - start )) s)"
