"""Benchmark: exact TSVM on COIL3 (and COIL20), one-vs-rest (issue 31, item 3).

COIL3 = the three toy cars of COIL-20 (objects 3, 6, 19; our reading of the
randomized paper's "3 classes ... difficult to discriminate", see
``semisvm.experiments._tsvm_coil``), 2 labeled images per object, one TSVM per
object against the others (positive fraction 1/3), each point assigned to the
largest decision value.  For each draw of the labels the table reports how many
of the binary problems are certified (a proof), their gaps, the time, and the
error on the unlabeled images next to ``SVC`` and the L2-SVM trained on the same
labels.  Rows are appended to ``benchmarks/results/tsvm_coil.csv``.

The data are read from ``--data-dir``, else ``$SEMISVM_DATA``, else
``../shared/data`` (``coil20.npz``; never committed).

Usage::

    python benchmarks/tsvm/bench_coil3.py --time-limit 120 --draws 0,1,2
    python benchmarks/tsvm/bench_coil3.py --objects all --time-limit 30   # COIL20
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import _common as cm  # noqa: E402
from semisvm.experiments._tsvm_coil import COIL3_OBJECTS, run_coil_tsvm  # noqa: E402

CSV = HERE.parent / "results" / "tsvm_coil.csv"
SHOW = [
    "objects",
    "draw",
    "gamma",
    "C_star",
    "method",
    "certified",
    "gaps",
    "time_s",
    "error_tsvm",
    "error_svc",
    "error_l2svm",
]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=None)
    p.add_argument(
        "--objects",
        default=",".join(map(str, COIL3_OBJECTS)),
        help="comma-separated COIL-20 object numbers, or 'all' (COIL20)",
    )
    p.add_argument("--scaling", default="unit_norm")
    p.add_argument("--per-class", type=int, default=2)
    p.add_argument("--draws", default="0")
    p.add_argument("--gamma", default="scale")
    p.add_argument("--C", type=float, default=10.0)
    p.add_argument("--C-star", type=float, default=1.0)
    p.add_argument("--method", default="randomized")
    p.add_argument("--time-limit", type=float, default=60.0, help="per class (s)")
    p.add_argument("--note", default="")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    gamma = args.gamma if args.gamma in ("scale", "median") else float(args.gamma)
    objects = (
        None if args.objects == "all" else [int(o) for o in args.objects.split(",")]
    )
    machine = cm.machine_description()
    rows = []
    for d in (int(x) for x in args.draws.split(",")):
        load = os.getloadavg()[0]
        (row,) = run_coil_tsvm(
            objects,
            data_dir=args.data_dir,
            scaling=args.scaling,
            per_class=args.per_class,
            draws=(d,),
            gamma=gamma,
            C=args.C,
            C_star=args.C_star,
            method=args.method,
            time_limit=args.time_limit,
        )
        row = {
            "date": machine["date"],
            "commit": machine["commit"],
            "load_1m": round(load, 2),
            **row,
            "note": args.note,
        }
        rows.append(row)
        print(cm.records_table([row], SHOW), flush=True)
    print()
    print(cm.records_table(rows, SHOW + ["load_1m"]))
    if args.no_write:
        return
    new = not CSV.exists()
    CSV.parent.mkdir(parents=True, exist_ok=True)
    with CSV.open("a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        if new:
            w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
