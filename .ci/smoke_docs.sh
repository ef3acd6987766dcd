#!/usr/bin/env bash
# Documentation smoke test: install the docs extra and build the site with
# warnings as errors (-W), executing the gallery examples except the long ones
# (examples/plot_long_*.py, run with SEMISVM_GALLERY_ALL=1).  Intersphinx is
# switched off so that the build needs no network.  Target: < 5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet -e ".[docs]" >/dev/null 2>&1 || python3 -m pip install --quiet -e ".[docs]"
start=$(date +%s)
rm -rf docs/_build docs/generated docs/auto_examples
export SEMISVM_DOCS_OFFLINE=1 MPLBACKEND=Agg
python3 -m sphinx -W --keep-going -b html -q docs docs/_build/html > /tmp/smoke_docs.log 2>&1 || {
  tail -60 /tmp/smoke_docs.log; exit 1; }
n=$(ls docs/_build/html/auto_examples/plot_*.html | wc -l)
imgs=$(ls docs/_build/html/_images/sphx_glr_plot_*_001.png 2>/dev/null | wc -l)
echo "docs built in $(( $(date +%s) - start )) s: $n gallery pages, $imgs with figures"
[ "$n" -ge 6 ] || { echo "expected at least 6 gallery examples, got $n"; exit 1; }
[ "$imgs" -ge 6 ] || { echo "expected at least 6 examples with figures, got $imgs"; exit 1; }
