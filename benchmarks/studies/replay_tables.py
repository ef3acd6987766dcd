"""The benchmark's tables from ``--replay`` runs, with the oracle column.

A ``bench_accuracy.py --replay`` row of ``LapSVM`` logs the errors on U of the
two candidates its auto rule compared (``err_def``: the graph-trusting
defaults, ``err_alt``: the best supervised model, each a fit of the estimator
with those weights); this script turns them into ``LapSVM-graph`` and
``LapSVM-sup`` rows of the same draw, so that the oracle column (per draw the
best of those two and SVC on the labels) exists without refitting them.  Rows
of other methods (peers) can come from other CSVs of the same draws;
``--rename old.csv:LapSVM=LapSVM-fixed`` keeps an earlier rule's rows beside.

Usage::

    python benchmarks/studies/replay_tables.py graded.csv peers.csv \\
        --rename peers.csv:LapSVM=LapSVM-fixed,LapRLS=LapRLS-fixed
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "accuracy"))
import bench_accuracy as ba  # noqa: E402

REPLAYED = re.compile(r"err_def=(\S+) err_alt=(\S+)")


def candidate_rows(rows: list[dict], method: str = "LapSVM") -> list[dict]:
    """``LapSVM-graph`` / ``LapSVM-sup`` rows from the replay notes of
    ``method``; where the rule was inactive (no evidence) the fitted model is the
    graph-trusting one."""
    out = []
    for r in rows:
        if r["method"] != method or r["err_unlabeled"] in ("", None):
            continue
        m = REPLAYED.search(r.get("note") or "")
        base = dict(r, fit_time="", note="", err_test="")
        if m is not None:
            out.append(dict(base, method="LapSVM-graph", err_unlabeled=m[1]))
            out.append(dict(base, method="LapSVM-sup", err_unlabeled=m[2]))
        elif "z=" not in (r.get("note") or ""):
            out.append(dict(base, method="LapSVM-graph"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+", help="the first holds the --replay rows")
    ap.add_argument(
        "--rename",
        action="append",
        default=[],
        help="FILE:OLD=NEW[,OLD=NEW]: methods of FILE renamed (kept beside)",
    )
    ap.add_argument("--methods", nargs="*", default=None)
    args = ap.parse_args(argv)
    renames: dict[str, dict[str, str]] = {}
    for spec in args.rename:
        f, pairs = spec.rsplit(":", 1)
        renames[f] = dict(p.split("=") for p in pairs.split(","))
    first = ba.read_rows(Path(args.csv[0]))
    own = {r["method"] for r in first}
    rows = list(first) + candidate_rows(first)
    for f in args.csv[1:]:
        ren = renames.get(f, {})
        for r in ba.read_rows(Path(f)):
            m = r["method"]
            if m in ren:
                rows.append(dict(r, method=ren[m]))
            elif m not in own and m not in ("LapSVM-graph", "LapSVM-sup"):
                rows.append(r)
    methods = args.methods or list(dict.fromkeys(r["method"] for r in rows))
    for m in methods:
        if m not in ba.METHODS:
            ba.METHODS.append(m)
    print(ba.summarize(rows, methods))
    return 0


if __name__ == "__main__":
    sys.exit(main())
