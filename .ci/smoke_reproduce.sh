#!/usr/bin/env bash
# Smoke run of `semisvm reproduce`: G50C, 2 splits, against the shared
# data directory; checks that the tables were written.  Skips (exit 0) when the
# data directory is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

DATA_DIR="${SEMISVM_DATA:-../shared/data}"
if [ ! -f "$DATA_DIR/g50c.npz" ]; then
  echo "smoke_reproduce: no data in $DATA_DIR (g50c.npz missing): skipped"
  exit 0
fi

OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

if command -v semisvm >/dev/null 2>&1; then
  CMD=(semisvm)
else
  CMD=(python3 -c "import sys; from semisvm.cli import main; sys.exit(main())")
fi

"${CMD[@]}" reproduce --data-dir "$DATA_DIR" --datasets g50c --splits 2 \
  --out "$OUT" --quiet

for f in tables.md table3.md table4.md table6.md table7.md table4.csv per_split.csv; do
  if [ ! -s "$OUT/$f" ]; then
    echo "smoke_reproduce: $OUT/$f missing or empty" >&2
    exit 1
  fi
done
grep -q "G50C" "$OUT/table4.md" || { echo "smoke_reproduce: no G50C row" >&2; exit 1; }
echo "smoke_reproduce: OK ($(wc -l < "$OUT/per_split.csv") per-split rows)"
