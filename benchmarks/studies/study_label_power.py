"""Can the labels tell the graph-trusting model from the supervised one?

Per draw of ``bench_accuracy.py`` this fits ``LapRLS(gamma_a=1e-6, gamma_i=1)``
(the graph-trusting defaults) and ``LapRLS(gamma_i=0)`` (the supervised model
with its own lambda_A) and compares their transductions with the true labels of
U: d_j = 1{graph wrong at j} - 1{supervised wrong at j}, q = P(d != 0) (the
models disagree and one of them is right), Delta = mean d (the graph's excess
error).  A paired test of the two models' 0-1 errors on l labels drawn like the
labeled points then has the expected statistic

    E z = Delta sqrt(l) / sqrt(q - Delta^2)

(mean over standard error of l i.i.d. copies of d).  This is the best any
label-based switch can see -- the LOO criterion of the ``"auto"`` rule adds the
noise of the held-out fits on top -- so a cell whose |E z| is well below the
threshold (1.645) cannot be decided from its labels however the criterion is
chosen.  One JSON line per draw goes to ``--csv``; the summary is printed.

Usage::

    python benchmarks/studies/study_label_power.py --only checker-2000 \\
        diabetes_median --settings 5/class 10/class --draws 10 --csv power.jsonl
"""

from __future__ import annotations

import collections
import json
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "accuracy"))
import bench_accuracy as ba  # noqa: E402
from study_mid_power import draws, study_main  # noqa: E402


def run(args) -> None:
    from semisvm import LapRLS

    for name, s, d, X, y, tr, ytr, pos, unl, _ in draws(args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = LapRLS(random_state=0, gamma_a=1e-6, gamma_i=1.0).fit(X[tr], ytr)
            sup = LapRLS(random_state=0, gamma_i=0.0).fit(X[tr], ytr)
        yu, n_lab = y[unl], int((ytr != -1).sum())
        eg = (g.transduction_[pos] != yu).astype(float)
        es = (sup.transduction_[pos] != yu).astype(float)
        diff = eg - es
        q, delta = float(np.mean(diff != 0)), float(diff.mean())
        ez = delta * np.sqrt(n_lab) / np.sqrt(max(q - delta * delta, 1e-12))
        row = dict(name=name, s=s, d=int(d), l=n_lab, q=q, D=delta, ez=float(ez))
        row.update(eg=float(eg.mean()), es=float(es.mean()))
        with open(args.csv, "a") as fh:
            fh.write(json.dumps(row) + "\n")


def summarize(path: str) -> str:
    rows = [json.loads(line) for line in open(path)]
    cells = collections.defaultdict(list)
    for r in rows:
        cells[(r["name"], r["s"])].append(r)
    header = ["cell", "labels", "graph err %", "sup err %", "q %", "Delta %"]
    header += ["median E z", "draws |E z| > 1.645"]
    out = []
    for (name, s), rs in sorted(cells.items()):
        out.append(
            [
                f"{name} {s}",
                str(rs[0]["l"]),
                f"{100 * np.mean([r['eg'] for r in rs]):.1f}",
                f"{100 * np.mean([r['es'] for r in rs]):.1f}",
                f"{100 * np.mean([r['q'] for r in rs]):.1f}",
                f"{100 * np.mean([r['D'] for r in rs]):+.1f}",
                f"{np.median([r['ez'] for r in rs]):+.2f}",
                f"{sum(abs(r['ez']) > 1.645 for r in rs)}/{len(rs)}",
            ]
        )
    return ba.markdown_table(header, out, fmt=str)


def main(argv: list[str] | None = None) -> int:
    return study_main(
        argv,
        __doc__,
        run,
        summarize,
        only=["checker-2000", "diabetes_median", "gauss_overlap-1000"],
        settings=["5/class", "10/class"],
        csv_name="label_power.jsonl",
        draws=10,
    )


if __name__ == "__main__":
    raise SystemExit(main())
