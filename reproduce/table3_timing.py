"""Why Table 3's orderings differ here: solver costs on one split, measured two ways.

For the first split of each data set (the protocol and parameters of
``semisvm reproduce``) this times, with one BLAS thread and medians of ``--repeats``
runs:

* ``dual (all columns)``: the reproduction's dual, one LU of
  A = 2 gamma_A I + 2 gamma_I L K shared by every one-vs-rest column;
* ``dual (per column)``: one call per column, as the authors' ``lapsvm.m`` works
  (it inverts A once per binary problem);
* Newton (forming LK included), and PCG with the rule of Table 3's last column;
* ``end to end``: the same plus the Gram matrix and the Laplacian.

Usage::

    python reproduce/table3_timing.py [--data-dir DIR] [--repeats 3]

Prints a markdown table and writes it to reproduce/melacci2011/table3_timing.md.
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from semisvm.datasets._loaders import load_benchmark, resolve_data_dir
from semisvm.datasets._splits import TABLE2_SIZES, paper_splits
from semisvm.experiments._paper_tables import (
    DATASET_LABELS,
    GRAPH_PARAMS,
    REG_PARAMS,
    TABLE3,
    TABLE3_BEST_PCG,
)
from semisvm.experiments._reproduce import prepare_split, run_classifier
from semisvm.solvers._dual import lapsvm_dual

DATASETS = ("g50c", "coil20_b", "pcmac", "uspst_b", "coil20", "uspst")


def _median_time(fn, repeats: int) -> float:
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def _measure(name: str, ddir: Path, repeats: int) -> str:
    data = load_benchmark(name, ddir)
    sigma, nn, p = GRAPH_PARAMS[name]
    n_l, _, n_v, _ = TABLE2_SIZES[name]
    split = paper_splits(data.y, n_l, n_v, n_splits=1, random_state=0)[0]
    prep = prepare_split(data.X, data.y, split, sigma=sigma, n_neighbors=nn, power=p,
                         graph_weight="heat")
    pre = prep.times["kernel"] + prep.times["graph"]
    C = prep.Y.shape[1]
    ga, gi = REG_PARAMS[name]["dual"]
    t_dual = _median_time(
        lambda: lapsvm_dual(prep.K, prep.L, prep.Y, gamma_a=ga, gamma_i=gi,
                            loss="hinge"), repeats)
    t_dual_col = _median_time(
        lambda: [lapsvm_dual(prep.K, prep.L, prep.Y[:, [c]], gamma_a=ga, gamma_i=gi,
                             loss="hinge")
                 for c in range(C)], repeats)
    gan, gin = REG_PARAMS[name]["newton"]
    t_newton = _median_time(lambda: run_classifier(prep, "newton", gan, gin), repeats)
    rule = TABLE3_BEST_PCG[name]
    gap, gip = REG_PARAMS[name][rule]
    rec: dict = {}
    t_pcg = _median_time(lambda: rec.update(run_classifier(prep, rule, gap, gip)),
                         repeats)
    it = rec["n_iter"]
    paper = TABLE3[name]
    return (
        f"| {DATASET_LABELS[name]} | {prep.K.shape[0]} | {C} | {t_dual:.3f} | "
        f"{t_dual_col:.3f} | {t_newton:.3f} | {t_pcg:.3f} ({rule.split('_')[1]}, "
        f"{it:.0f} it, {1e3 * t_pcg / max(it, 1):.1f} ms/it) | {pre:.3f} | "
        f"{t_dual + pre:.3f} / {t_newton + pre:.3f} / {t_pcg + pre:.3f} | "
        f"{paper['dual'][0]:g} / {paper['newton'][0]:g} / {paper['pcg'][0]:g} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).parent / "melacci2011"
                                          / "table3_timing.md"))
    args = ap.parse_args()
    ddir = resolve_data_dir(args.data_dir)
    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for name in DATASETS:
            rows.append(_measure(name, ddir, args.repeats))
            print(rows[-1], flush=True)
    head = [
        "# Table 3 on this machine: solver costs on split 1",
        "",
        f"Command: `python reproduce/table3_timing.py --repeats {args.repeats}`; "
        f"machine: {platform.machine()}, {__import__('os').cpu_count()} cores "
        "(shared), 1 BLAS thread; medians of the repeats, seconds.",
        "",
        "| Data set | n | columns | dual (all columns) | dual (per column) | Newton | "
        "PCG (rule, iterations, per iteration) | K + L | end to end dual / Newton / PCG"
        " | paper dual / Newton / PCG |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    Path(args.out).write_text("\n".join(head + rows) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
