"""Plots (and tables) of BENCHMARKS.md (the documentation's Benchmarks page) from the results files.

Reads the per-draw CSV files of ``benchmarks/accuracy/bench_accuracy.py`` and the
JSON lines of ``benchmarks/scale/bench_scale.py``; measures nothing itself.

* ``docs/_static/bench_accuracy_labels.png``: error on the unlabeled points against
  labels per class, ``LapSVM()`` and the peers: full USPS (``PEERS_FILE``, the run
  ``PEERS_RUN`` of ``bench_peers.py``) and the mean over the standard families
  (``STANDARD_FILE``, one run);
* ``docs/_static/bench_time_n.png``: fit time against the number of training
  points (two moons, one label per class, ``SCALE_ACCURACY_FILE``, one run, with the
  peers), and the scale benchmark's total time and peak memory against n
  (``benchmarks/scale/results/scale.jsonl``, the run ``SCALE_RUN``, with the peers).

::

    python benchmarks/plot_report.py            # writes the PNGs
    python benchmarks/plot_report.py --tables   # also prints the markdown tables
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
OUT = ROOT / "docs" / "_static"

#: full USPS at 1 / 5 / 10 labels per class, every method in one run
#: (``benchmarks/bench_peers.py``; BENCHMARKS.md's table)
PEERS_FILE = "peers.csv"
#: the run of ``PEERS_FILE`` the plot draws (its time stamp)
PEERS_RUN = "2026-11-29 17:58 UTC"
#: bench_peers' method names -> bench_accuracy's
PEERS_METHODS = {
    "Poisson": "Poisson-gl",
    "Laplace": "Laplace-gl",
    "LabelSpreading": "LabelSpreading-knn",
}
#: the latest run of the standard families with every peer in the same run
STANDARD_FILE = "accuracy_std.csv"
#: the latest run of the held-out families with every peer in the same run
HELDOUT_FILE = "accuracy_heldout_2026-11-29.csv"
#: two moons and two circles at 200 ... 100,000 points, one label per class
SCALE_ACCURACY_FILE = "accuracy_low_label.csv"
SCALE_JSONL = HERE / "scale" / "results" / "scale.jsonl"
#: the scale benchmark's run the plots draw (its ``stamp`` in ``SCALE_JSONL``)
SCALE_RUN = "2026-11-28 17:58 UTC"

METHODS = [
    "LapSVM",
    "LapRLS",
    "Poisson-gl",
    "Laplace-gl",
    "LabelSpreading-knn",
    "SVC",
    "SVC-CV",
    "majority",
]
#: the methods the plots draw (the majority class is a table row only)
PLOTTED = [m for m in METHODS if m != "majority"]
LABELS = {
    "LapSVM": "LapSVM()",
    "LapRLS": "LapRLS()",
    "Poisson-gl": "Poisson learning (graphlearning)",
    "Laplace-gl": "Laplace learning (graphlearning)",
    "LabelSpreading-knn": "LabelSpreading(kernel='knn')",
    "SVC": "SVC() on the labels",
    "SVC-CV": "grid-searched SVC on the labels",
    "majority": "majority class",
}
STYLE = {
    "LapSVM": dict(color="C3", marker="o", lw=2.5),
    "LapRLS": dict(color="C1", marker="s", ls="--"),
    "Poisson-gl": dict(color="C0", marker="^"),
    "Laplace-gl": dict(color="C9", marker="v"),
    "LabelSpreading-knn": dict(color="C2", marker="D"),
    "SVC": dict(color="0.3", marker="x"),
    "SVC-CV": dict(color="0.6", marker="+", ls=":"),
    "majority": dict(color="0.8", marker=".", ls=":"),
}


def provenance(name: str) -> str:
    """'<commit> <date>' of the last commit of a results file (git), or ''."""
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%h %cs", "--", str(RESULTS / name)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=False,
        )
        return out.stdout.strip()
    except OSError:
        return ""


def read(name: str) -> pd.DataFrame:
    d = pd.read_csv(RESULTS / name)
    d["file"] = name
    return d


def read_peers(run: str = PEERS_RUN) -> pd.DataFrame:
    """The full-USPS rows of one ``bench_peers.py`` run, in the accuracy files'
    columns (``dataset='usps_full'``, ``setting='k/class'``)."""
    cols = ["stamp", "commit", "family", "draw", "method", "err_unlabeled", "fit_time"]
    d = pd.read_csv(RESULTS / PEERS_FILE, header=None, names=cols)
    d = d[(d.stamp == run) & d.family.str.fullmatch(r"usps\d+")].copy()
    d["dataset"] = "usps_full"
    d["setting"] = d.family.str[4:] + "/class"
    d["method"] = d.method.replace(PEERS_METHODS)
    d["file"] = PEERS_FILE
    return d


def cell_stats(d: pd.DataFrame) -> pd.DataFrame:
    g = d.groupby(["dataset", "setting", "method"])
    s = g.agg(
        err=("err_unlabeled", "mean"),
        sd=("err_unlabeled", "std"),
        t=("fit_time", "median"),
        draws=("err_unlabeled", "count"),
        file=("file", "first"),
    )
    s[["err", "sd"]] *= 100
    return s.reset_index()


def _fmt(e: float, sd: float | None = None) -> str:
    if e != e:
        return "-"
    return f"{e:.1f}" if sd is None or sd != sd else f"{e:.1f} ± {sd:.1f}"


def _secs(t: float) -> str:
    if t != t:
        return "-"
    return f"{t:.3f}" if t < 0.1 else f"{t:.2f}" if t < 10 else f"{t:.0f}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def per_cell_table(s: pd.DataFrame, methods: list[str]) -> str:
    rows = []
    for (ds, st), c in s.groupby(["dataset", "setting"], sort=True):
        c = c.set_index("method")
        rows.append(
            [ds, st]
            + [_fmt(c.err.get(m, np.nan)) if m in c.index else "-" for m in methods]
        )
    return _table(["data set", "labels"] + [LABELS[m] for m in methods], rows)


def summary_table(s: pd.DataFrame, methods: list[str]) -> str:
    """Mean error over the cells every method ran; against SVC; fit time."""
    wide = s.pivot_table(index=["dataset", "setting"], columns="method", values="err")
    common = wide[[m for m in methods if m in wide]].dropna()
    rows = []
    for m in methods:
        if m not in wide:
            continue
        better = ((common[m] < common["SVC"] - 1).sum(), len(common))
        worse = (common[m] > common["SVC"] + 1).sum()
        t = s[s.method == m]["t"] if m != "majority" else pd.Series([np.nan])
        rows.append(
            [
                LABELS[m],
                f"{common[m].mean():.1f}",
                f"{better[0]} / {worse}" if m != "SVC" else "-",
                _secs(t.median()),
                _secs(t.max()),
            ]
        )
    head = [
        "method",
        f"mean error % ({len(common)} cells)",
        "cells better / worse than SVC by > 1 point",
        "median fit s",
        "max fit s",
    ]
    return _table(head, rows)


def usps_table(s: pd.DataFrame) -> str:
    rows = []
    for m in METHODS:
        c = s[s.method == m].set_index("setting")
        if c.empty:
            continue
        row = [LABELS[m]]
        for st in ("1/class", "5/class", "10/class"):
            row.append(_fmt(c.err[st], c.sd[st]) if st in c.index else "-")
        row.append(
            ", ".join(
                f"{_secs(c.t[st])}" if st in c.index else "-"
                for st in ("1/class", "5/class", "10/class")
            )
        )
        files = [
            c.file[st] for st in ("1/class", "5/class", "10/class") if st in c.index
        ]
        row.append(", ".join(sorted(set(files), key=files.index)))
        rows.append(row)
    head = ["method", "1 / class", "5 / class", "10 / class", "median fit s", "run"]
    return _table(head, rows)


def scale_accuracy_table(s: pd.DataFrame) -> str:
    methods = ["LapSVM", "LapRLS", "Poisson-gl", "Laplace-gl", "LabelSpreading-knn"]
    methods += ["SVC", "majority"]
    rows = []
    s = s.assign(size=s.dataset.str.extract(r"-(\d+)$")[0].astype(float))
    for (ds, _), c in s.sort_values("size").groupby(["dataset", "size"], sort=False):
        c = c.set_index("method")
        row = [ds]
        for m in methods:
            if m not in c.index:
                row.append("-")
            elif m == "majority":  # no fit to time
                row.append(f"{c.err[m]:.2f}")
            else:
                row.append(f"{c.err[m]:.2f} ({_secs(c.t[m])} s)")
        rows.append(row)
    return _table(["data set"] + [LABELS[m] for m in methods], rows)


# ------------------------------------------------------------------ plots
def plot_accuracy(usps: pd.DataFrame, std: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = {"1/class": 1, "5/class": 5, "10/class": 10}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
    ax = axes[0]
    for m in PLOTTED:
        c = usps[usps.method == m]
        c = c[c.setting.isin(x)].assign(k=lambda d: d.setting.map(x)).sort_values("k")
        if len(c):
            ax.plot(c.k, c.err, label=LABELS[m], **STYLE[m])
    ax.set(
        title="Full USPS (9,298 points, 10 classes; 3 draws, one run)",
        xlabel="labels per class",
        ylabel="error on the unlabeled points (%)",
        xticks=[1, 5, 10],
        ylim=(0, None),
    )
    ax = axes[1]
    wide = std[std.setting.isin(x)].pivot_table(
        index=["dataset", "setting"], columns="method", values="err"
    )
    wide = wide[[m for m in PLOTTED if m in wide]].dropna()
    means = wide.groupby(level="setting").mean()
    cells = wide.groupby(level="setting").size()
    for m in means.columns:
        k = [x[st] for st in means.index]
        order = np.argsort(k)
        ax.plot(np.array(k)[order], means[m].values[order], label=LABELS[m], **STYLE[m])
    ax.set(
        title=f"Standard families, mean over {cells.min()}-{cells.max()} cells",
        xlabel="labels per class",
        xticks=[1, 5, 10],
        ylim=(0, None),
    )
    axes[0].legend(fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_time(sa: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2), constrained_layout=True)
    ax = axes[0]
    moons = sa[sa.dataset.str.match(r"moons-\d+$") & (sa.setting == "1/class")]
    for m in PLOTTED:
        c = moons[moons.method == m].copy()
        if c.empty:
            continue
        c["n_train"] = c.dataset.str.extract(r"-(\d+)$")[0].astype(int) * 3 // 4
        c = c.sort_values("n_train")
        ax.loglog(c.n_train, c.t, label=LABELS[m], **STYLE[m])
    ax.set(
        title="Two moons, 1 label per class: fit time",
        xlabel="training points n",
        ylabel="median fit time (s)",
    )
    ax.legend(fontsize=8)
    rows = [json.loads(ln) for ln in SCALE_JSONL.read_text().splitlines() if ln.strip()]
    sc = pd.DataFrame(
        [
            r
            for r in rows
            if r.get("stamp") == SCALE_RUN
            and r.get("data") == "moons"
            and "t_total" in r
        ]
    )
    names = {
        "auto": "LapSVM()",
        "dense": "LapSVM, dense K",
        "nystroem": "LapSVM, Nyström",
        "labelspreading": LABELS["LabelSpreading-knn"],
        "poisson": "Poisson learning (graphlearning)",
        "svc": LABELS["SVC"],
    }
    styles = {
        "auto": STYLE["LapSVM"],
        "dense": dict(color="C3", marker="o"),
        "nystroem": dict(color="C3", marker="s", ls="--"),
        "labelspreading": STYLE["LabelSpreading-knn"],
        "poisson": STYLE["Poisson-gl"],
        "svc": STYLE["SVC"],
    }
    for meth, c in sc.groupby("method"):
        c = c.sort_values("n")
        axes[1].loglog(c.n, c.t_total, label=names[meth], **styles[meth])
        axes[2].loglog(c.n, c.peak_rss_gib, label=names[meth], **styles[meth])
    axes[1].set(
        title="Scale benchmark, two moons, 50 labels: total time",
        xlabel="points n",
        ylabel="seconds (one BLAS thread, shared machine)",
    )
    axes[2].set(title="peak memory", xlabel="points n", ylabel="peak RSS (GiB)")
    axes[1].legend(fontsize=8)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", action="store_true", help="print the markdown tables")
    p.add_argument("--out", default=str(OUT), help="folder of the PNGs")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    usps = cell_stats(read_peers())
    std = cell_stats(read(STANDARD_FILE))
    std = std[std.dataset != "usps_full"]
    held = cell_stats(read(HELDOUT_FILE))
    sa = cell_stats(read(SCALE_ACCURACY_FILE))

    plot_accuracy(usps, std, out / "bench_accuracy_labels.png")
    plot_time(sa, out / "bench_time_n.png")
    print(f"wrote {out / 'bench_accuracy_labels.png'} and {out / 'bench_time_n.png'}")

    if args.tables:
        for name in [STANDARD_FILE, HELDOUT_FILE, SCALE_ACCURACY_FILE]:
            print(f"- {name}: {provenance(name)}")
        print("\n## Full USPS\n\n" + usps_table(usps))
        print("\n## Standard families\n\n" + per_cell_table(std, METHODS))
        print("\n" + summary_table(std, METHODS))
        print("\n## Held-out families\n\n" + per_cell_table(held, METHODS))
        print("\n" + summary_table(held, METHODS))
        print("\n## Two moons and circles, 1 label per class\n")
        print(scale_accuracy_table(sa[sa.setting == "1/class"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
