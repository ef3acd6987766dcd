"""Study: the graph term's weight against n on ten-class digits.

The default fit's problem is prepared once (its operator, graph, and the
weights the "auto" rule chooses); the model is then fitted with the paper's
gamma_I times each ``--factors`` value, everything else fixed, and the error on
the unlabeled points printed with the PCG iterations and the solve time.  Data:
full USPS with ``--copies`` deformed copies of every image
(``bench_peers.deformed_usps``; 0: USPS itself), ``--per-class`` labels per
class, label draw ``--draw``; one BLAS thread.

    python benchmarks/studies/study_graph_weight_n.py --copies 0 --factors 1 3 10 30
    python benchmarks/studies/study_graph_weight_n.py --copies 7 --factors 1 3 10

Appends its rows to ``benchmarks/results/study_graph_weight_n.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "accuracy"))
import _common as cm  # noqa: E402
import bench_peers as bp  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=0)
    ap.add_argument("--per-class", type=int, default=5)
    ap.add_argument("--draw", type=int, default=0)
    ap.add_argument("--factors", type=float, nargs="+", default=[1.0, 3.0, 10.0])
    ap.add_argument("--data", default=None)
    args = ap.parse_args()
    from threadpoolctl import threadpool_limits

    from semisvm import LapSVM
    from semisvm.models._model import choose_regularization, fit_model
    from semisvm.models._params import fit_params
    from semisvm.models._problem import prepare_problem

    X, y, yy, unl = bp.usps_draw(args.data, args.copies, args.per_class, args.draw)
    lines = []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        params = fit_params(LapSVM())
        t0 = time.perf_counter()
        problem = prepare_problem(X, yy, params)
        reg = choose_regularization(problem, params)
        head = (
            f"n={y.size} ({args.copies} copies), {args.per_class}/class, draw "
            f"{args.draw}: operator {problem.kind}, gamma_a={reg.gamma_a_:.3g}, "
            f"gamma_i={reg.gamma_i_:.4g} ({time.perf_counter() - t0:.0f} s)"
        )
        print(head, flush=True)
        lines.append(head)
        for f in args.factors:
            t1 = time.perf_counter()
            model = fit_model(
                problem, params, dataclasses.replace(reg, gamma_i_=reg.gamma_i_ * f)
            )
            err = 100 * np.mean(model["transduction_"][unl] != y[unl])
            row = (
                f"  gamma_i x {f:g}: error {err:.2f}%, {int(np.max(model['n_iter_']))} "
                f"iterations, {time.perf_counter() - t1:.0f} s"
            )
            print(row, flush=True)
            lines.append(row)
    cm.append_results(
        "study_graph_weight_n",
        "the graph term's weight against n",
        " ".join(sys.argv),
        "\n".join(lines) + "\n",
        cm.machine_description(),
    )


if __name__ == "__main__":
    main()
