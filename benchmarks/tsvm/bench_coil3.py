"""Benchmark: exact TSVM on COIL3 (and COIL20), one-vs-rest.

COIL3 = the three toy cars of COIL-20 (objects 3, 6, 19; our reading of the
randomized paper's "3 classes ... difficult to discriminate", see
``semisvm.experiments._tsvm_coil``), 2 labeled images per object, one TSVM per
object against the others (positive fraction 1/3), each point assigned to the
largest decision value.  For each draw of the labels the table reports how many
of the binary problems are certified (a proof), their gaps, the time, and the
error on the unlabeled images next to ``SVC`` and the L2-SVM trained on the same
labels; ``--peel`` adds the paper's iterative procedure for COIL20 with proofs as
the criterion (``semisvm.experiments._tsvm_coil.tsvm_peeling``).  Rows are appended to ``benchmarks/results/tsvm_coil.csv``.

The data are read from ``--data-dir``, else ``$SEMISVM_DATA``, else
``../shared/data`` (``coil20.npz``; never committed).

Usage::

    python benchmarks/tsvm/bench_coil3.py --time-limit 120 --draws 0,1,2
    python benchmarks/tsvm/bench_coil3.py --objects all --time-limit 30   # COIL20
    python benchmarks/tsvm/bench_coil3.py --objects all --peel   # + iterative
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
PEEL = ["error_peel", "peel_passes", "peel_certified", "peel_by_proof"]
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
    p.add_argument(
        "--peel",
        action="store_true",
        help="also the paper's iterative one-vs-rest (certified columns only)",
    )
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
            peel=args.peel,
        )
        row = {
            "date": machine["date"],
            "commit": machine["commit"],
            "load_1m": round(load, 2),
            **row,
            "note": args.note,
        }
        rows.append(row)
        show = SHOW + (PEEL if args.peel else [])
        print(cm.records_table([row], show), flush=True)
    print()
    print(cm.records_table(rows, show + ["load_1m"]))
    if args.no_write:
        return
    append_rows(CSV, rows)


def append_rows(path: Path, rows: list[dict]) -> None:
    """Append ``rows`` to the CSV at ``path``; new columns widen the header
    (the file is rewritten with the union of the columns, old cells blank)."""
    old, fields = [], []
    if path.exists():
        with path.open(newline="") as fh:
            rd = csv.DictReader(fh)
            fields = list(rd.fieldnames or [])
            old = list(rd)
    for row in rows:
        fields += [k for k in row if k not in fields]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields)
        w.writeheader()
        w.writerows(old + rows)


if __name__ == "__main__":
    main()
