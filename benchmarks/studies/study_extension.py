"""Why the graph-trusting model's predictions on new points are worse than its
transduction (the extension study; see benchmarks/results/extension_study.md).

For every (family, setting, draw) of :mod:`bench_accuracy` (same data loading and
splits: labeled, unlabeled and the held-out test quarter) this fits

* the defaults ``LapSVM()`` and ``LapRLS()`` (the ``"auto"`` rule),
* the graph-trusting model ``gamma_i=1`` at ``gamma_a`` in :data:`GRID` (LapSVM,
  and LapRLS with ``--rls``),
* the supervised ``LapSVM(gamma_a="auto", gamma_i=0)`` and ``SVC()`` (the
  oracle's other two members),

and writes one CSV row per fit: error on U (``transduction_``), error on the
test part (``predict``), and the diagnostics of the extension
:math:`f(x) = \\sum_i \\alpha_i k(x, x_i) + b`:

* ``err_knn``: a 10-NN vote of the transduction on the test points (what a
  stable extension of the transduction would give);
* ``err_nooff``: ``predict`` without the class-balance offset;
* ``err_train_pred``: ``predict`` on the unlabeled training points themselves
  (must equal the transduction: a consistency check);
* ``spread``: the standard deviation of f on U; ``jump``: the median over the
  test points of :math:`|f(x) - \\mathrm{mean}_{10NN} f|` divided by ``spread``
  (how far f leaves its neighbours' values between training points);
* ``alpha_rms``, ``alpha_l1_over_sum`` (:math:`\\|\\alpha\\|_1 / |\\sum \\alpha|`,
  large when the coefficients cancel), ``rkhs`` (:math:`\\alpha^T K \\alpha`),
  ``offset`` (the class-balance shift), ``gamma`` (kernel parameter).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=src python benchmarks/studies/study_extension.py \\
        --only gauss_overlap-1000 digits358 --draws 3 --csv out.csv
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "accuracy"))
sys.path.insert(0, str(HERE.parent))
from bench_accuracy import FIELDS as BENCH_FIELDS  # noqa: E402
from bench_accuracy import draw_split, load  # noqa: E402

from _common import RESULTS, data_dir  # noqa: E402

#: normalized gamma_a of the graph-trusting model (gamma_i = 1)
GRID = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
#: the families of the study: where the graph misleads, then where it is right
FAMILIES = (
    "gauss_overlap-1000",
    "mc_clusters-1500",
    "linear_uniform-1000",
    "checker-2000",
    "xor_noise-1000",
    "digits358",
    "usps49-2000",
    "spirals-1000",
    "g50c",
    "coil20",
)
SETTINGS = ("5/class", "10/class")
# the bench's per-draw columns up to the errors, then the study's own
FIELDS = BENCH_FIELDS[: BENCH_FIELDS.index("err_test") + 1] + [
    "err_knn",
    "err_nooff",
    "err_train_pred",
    "spread",
    "jump",
    "alpha_rms",
    "alpha_l1_over_sum",
    "rkhs",
    "offset",
    "gamma",
    "fit_time",
    "note",
]


def methods(rls: bool, extra: list[str], widths: tuple = ()) -> list[tuple[str, dict]]:
    """(name, constructor arguments) of every fit; ``widths``: the
    graph-trusting LapSVM with the kNN-rule gamma times each factor."""
    out: list[tuple[str, dict]] = [("LapSVM", {}), ("LapRLS", {})]
    out += [
        (f"LapSVM-w{m:g}", {"gamma_a": 1e-6, "gamma_i": 1.0, "width": m})
        for m in widths
    ]
    out += [(f"LapSVM-g{g:.0e}", {"gamma_a": g, "gamma_i": 1.0}) for g in GRID]
    if rls:
        out += [(f"LapRLS-g{g:.0e}", {"gamma_a": g, "gamma_i": 1.0}) for g in GRID]
    out += [("LapSVM-sup", {"gamma_a": "auto", "gamma_i": 0.0}), ("SVC", {})]
    # the defaults without the extension check (semisvm.models._extension)
    out += [
        (f"{c}-off", {"options": {"extension_width": None}})
        for c in ("LapSVM", "LapRLS")
    ]
    out += [(name, {}) for name in extra]
    return out


def _knn(Xtr, Xq, k=10):
    from sklearn.neighbors import NearestNeighbors

    return NearestNeighbors(n_neighbors=k).fit(Xtr).kneighbors(Xq)[1]


def _diagnostics(est, Xtr, ytr, Xte, y_te, nbr_te) -> dict:
    """The extension's diagnostics of one fitted manifold estimator."""
    from semisvm.models._problem import prediction_kernel

    unl = ytr == -1
    F_tr = est._batched_decision(Xtr, validate=False)
    F_te = est._batched_decision(Xte, validate=False)
    off = np.asarray(est.class_balance_offset_, dtype=np.float64)
    lab_of = est._labels_from_scores
    err_nooff = float(np.mean(lab_of(F_te - off) != y_te))
    err_train = float(np.mean(lab_of(F_tr[unl]) != np.asarray(est.transduction_)[unl]))
    # 10-NN vote of the transduction (classes coded by their index)
    t_idx = np.searchsorted(est.classes_, est.transduction_)
    votes = np.apply_along_axis(
        lambda r: np.bincount(r, minlength=est.classes_.size).argmax(),
        1,
        t_idx[nbr_te],
    )
    err_knn = float(np.mean(est.classes_[votes] != y_te))
    spread = float(np.mean(F_tr[unl].std(axis=0)))
    jump = float(
        np.median(np.abs(F_te - F_tr[nbr_te].mean(axis=1)).mean(axis=1)) / spread
    )
    A = np.asarray(est.dual_coef_, dtype=np.float64).reshape(Xtr.shape[0], -1)
    K = prediction_kernel(est, Xtr, Xtr)
    rkhs = float(np.mean(np.einsum("ic,ic->c", A, K @ A)))
    return {
        "err_knn": err_knn,
        "err_nooff": err_nooff,
        "err_train_pred": err_train,
        "spread": spread,
        "jump": jump,
        "alpha_rms": float(np.sqrt(np.mean(A**2))),
        "alpha_l1_over_sum": float(
            np.mean(np.abs(A).sum(axis=0) / np.maximum(np.abs(A.sum(axis=0)), 1e-300))
        ),
        "rkhs": rkhs,
        "offset": float(np.mean(np.abs(off))),
        "gamma": float(est.gamma_),
    }


def make(name: str, kw: dict, Xtr=None):
    from sklearn.svm import SVC

    from semisvm import LapRLS, LapSVM
    from semisvm.kernels import knn_gamma

    if name == "SVC":
        return SVC()
    cls = LapRLS if name.startswith("LapRLS") else LapSVM
    kw = dict(kw)
    if "options" in kw:
        from semisvm import SolverOptions

        kw["options"] = SolverOptions(**kw["options"])
    if "width" in kw:  # the kNN-rule gamma times this factor
        kw["gamma"] = kw.pop("width") * knn_gamma(Xtr, 10)
    return cls(**kw)


def run_cell(name, setting, draws, todo, ddir, done) -> list[dict]:
    X, y, test_mask = load(name, ddir)
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    rows = []
    for draw in range(draws):
        lab, unl, test = draw_split(y, test_mask, setting, draw, name)
        tr = np.sort(np.r_[lab, unl])
        Xtr, Xte, y_te = X[tr], X[test], y[test]
        ytr = np.where(np.isin(tr, lab), y[tr], -1)
        pos = np.searchsorted(tr, unl)
        nbr_te = _knn(Xtr, Xte)
        for mname, kw in todo:
            if (name, setting, str(draw), mname) in done:
                continue
            est = make(mname, kw, Xtr)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                if mname == "SVC":
                    est.fit(X[lab], y[lab])
                else:
                    est.fit(Xtr, ytr)
                t = time.perf_counter() - t0
            row = {
                "dataset": name,
                "setting": setting,
                "draw": draw,
                "method": mname,
                "n": tr.size,
                "n_labeled": lab.size,
                "fit_time": f"{t:.4f}",
            }
            if mname == "SVC":
                eu = float(np.mean(est.predict(X[unl]) != y[unl]))
                note = ""
            else:
                eu = float(np.mean(np.asarray(est.transduction_)[pos] != y[unl]))
                row.update(
                    {
                        k: f"{v:.6g}"
                        for k, v in _diagnostics(
                            est, Xtr, ytr, Xte, y_te, nbr_te
                        ).items()
                    }
                )
                sel = getattr(est, "regularization_selection_", {})
                note = f"rule={sel.get('rule')} ga={sel.get('gamma_a')} gi={sel.get('gamma_i')}"
                ext = getattr(est, "extension_check_", None)
                if ext:
                    dis = "/".join(f"{100 * r:.1f}" for r in ext["disagreement"])
                    note += f" width=x{ext['factor']:g} loo_dis={dis}"
            row["err_unlabeled"] = f"{eu:.6f}"
            row["err_test"] = f"{np.mean(est.predict(Xte) != y_te):.6f}"
            row["note"] = note
            rows.append(row)
            print(
                f"{name:20s} {setting:8s} {draw} {mname:14s} U {100 * eu:5.1f} "
                f"test {100 * float(row['err_test']):5.1f} knn "
                f"{100 * float(row.get('err_knn', 'nan')):5.1f} t {t:.2f}s {note}",
                flush=True,
            )
    return rows


def _mean(rows, key) -> float:
    vals = [float(r[key]) for r in rows if r.get(key) not in ("", None)]
    return 100 * float(np.mean(vals)) if vals else float("nan")


def summarize(before: Path, after: Path) -> str:
    """Markdown table: per cell and estimator, error on U and on the test part
    before (``before`` CSV, or the ``-off`` rows) and after the extension
    check, SVC and the oracle (best on U per draw of the graph-trusting model,
    the lambda_I = 0 model and SVC) where those ran."""
    rows_b = list(csv.DictReader(open(before, newline="")))
    rows_a = list(csv.DictReader(open(after, newline=""))) if after != before else []
    cells = list(dict.fromkeys((r["dataset"], r["setting"]) for r in rows_b))
    head = (
        "| family | setting | draws | estimator | U before | U after | test before "
        "| test after | width moved | SVC U / test | oracle U / test |"
    )
    out = [head, "|" + "---|" * 11]
    for ds, st in cells:
        b = [r for r in rows_b if (r["dataset"], r["setting"]) == (ds, st)]
        a = [r for r in rows_a if (r["dataset"], r["setting"]) == (ds, st)] or b

        def pick(rows, m):
            return {r["draw"]: r for r in rows if r["method"] == m}

        svc = pick(b, "SVC")
        g, sup = pick(b, "LapSVM-g1e-06"), pick(b, "LapSVM-sup")
        orc = [
            min((g[d], sup[d], svc[d]), key=lambda r: float(r["err_unlabeled"]))
            for d in g
            if d in sup and d in svc
        ]
        for est in ("LapSVM", "LapRLS"):
            after_rows = pick(a, est)
            before_rows = pick(b, f"{est}-off") if a is b else pick(b, est)
            draws = sorted(set(after_rows) & set(before_rows))
            if not draws:
                continue
            rb = [before_rows[d] for d in draws]
            ra = [after_rows[d] for d in draws]
            moved = sum(
                "width=x" in r["note"] and "width=x1 " not in r["note"] for r in ra
            )
            sv = [svc[d] for d in draws if d in svc]
            out.append(
                f"| {ds} | {st} | {len(draws)} | {est} | {_mean(rb, 'err_unlabeled'):.1f}"
                f" | {_mean(ra, 'err_unlabeled'):.1f} | {_mean(rb, 'err_test'):.1f} | "
                f"{_mean(ra, 'err_test'):.1f} | {moved}/{len(draws)} | "
                + (
                    f"{_mean(sv, 'err_unlabeled'):.1f} / {_mean(sv, 'err_test'):.1f}"
                    if sv
                    else "-"
                )
                + " | "
                + (
                    f"{_mean(orc, 'err_unlabeled'):.1f} / {_mean(orc, 'err_test'):.1f}"
                    if orc
                    else "-"
                )
                + " |"
            )
    return "\n".join(out)


def cost(names, settings, ddir, repeats: int = 3) -> str:
    """Markdown table: fit time of ``LapSVM()`` / ``LapRLS()`` with and without
    the extension check (best of ``repeats``, draw 0), and the check's own
    share (``fit_times_['extension']``, refit included)."""
    from semisvm import LapRLS, LapSVM, SolverOptions

    off = SolverOptions(extension_width=None)
    out = [
        "| family | setting | n | estimator | fit s (no check) | fit s (check) "
        "| extra | check s | width |",
        "|" + "---|" * 9,
    ]
    for name in names:
        X, y, test_mask = load(name, ddir)
        for setting in settings:
            lab, unl, _ = draw_split(y, test_mask, setting, 0, name)
            tr = np.sort(np.r_[lab, unl])
            ytr = np.where(np.isin(tr, lab), y[tr], -1)
            for cls in (LapSVM, LapRLS):
                best = {}
                for tag, kw in (("off", {"options": off}), ("on", {})):
                    ts = []
                    for _ in range(repeats):
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            t0 = time.perf_counter()
                            est = cls(**kw).fit(X[tr], ytr)
                            ts.append(time.perf_counter() - t0)
                    best[tag] = (min(ts), est)
                (t_off, _), (t_on, est) = best["off"], best["on"]
                ext = est.extension_check_
                out.append(
                    f"| {name} | {setting} | {tr.size} | {cls.__name__} | {t_off:.3f} "
                    f"| {t_on:.3f} | {100 * (t_on / t_off - 1):+.0f}% | "
                    f"{est.fit_times_.get('extension', 0.0):.3f} | "
                    + (f"x{ext['factor']:g}" if ext else "not run")
                    + " |"
                )
                print(out[-1], flush=True)
    return "\n".join(out)


def lambda_at_width(names, settings, draws, ddir) -> None:
    """Print, per draw, U / test error of the graph-trusting LapSVM (exact
    Newton solver) at the width factor the extension check chooses, for
    lambda_A in 1e-6, 1e-5, 1e-4: does lambda_A help on top of the width?"""
    from semisvm import LapSVM, SolverOptions
    from semisvm.kernels import knn_gamma

    off = SolverOptions(extension_width=None)
    for name in names:
        X, y, test_mask = load(name, ddir)
        X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
        for setting in settings:
            for draw in range(draws):
                lab, unl, test = draw_split(y, test_mask, setting, draw, name)
                tr = np.sort(np.r_[lab, unl])
                ytr = np.where(np.isin(tr, lab), y[tr], -1)
                pos = np.searchsorted(tr, unl)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est = LapSVM(gamma_a=1e-6, gamma_i=1.0, solver="newton")
                    m = est.fit(X[tr], ytr).extension_check_["factor"]
                    g0 = knn_gamma(X[tr], 10)
                    cells = []
                    for ga in (1e-6, 1e-5, 1e-4):
                        e = LapSVM(
                            gamma_a=ga,
                            gamma_i=1.0,
                            gamma=g0 * m,
                            solver="newton",
                            options=off,
                        ).fit(X[tr], ytr)
                        eu = 100 * np.mean(e.transduction_[pos] != y[unl])
                        et = 100 * np.mean(e.predict(X[test]) != y[test])
                        cells.append(f"a{ga:.0e}:{eu:.1f}/{et:.1f}")
                print(name, setting, draw, "m=", m, " ".join(cells), flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", default=list(FAMILIES))
    ap.add_argument("--settings", nargs="*", default=list(SETTINGS))
    ap.add_argument("--draws", type=int, default=3)
    ap.add_argument("--rls", action="store_true", help="also the LapRLS grid")
    ap.add_argument(
        "--methods", nargs="*", default=None, help="only these method names"
    )
    ap.add_argument(
        "--widths",
        nargs="*",
        type=float,
        default=[],
        help="graph-trusting LapSVM with the kNN gamma times these factors",
    )
    ap.add_argument("--data", default=None)
    ap.add_argument("--csv", default=str(RESULTS / "extension_study.csv"))
    ap.add_argument(
        "--summarize",
        nargs="+",
        metavar="CSV",
        help="print the markdown table of BEFORE [AFTER] (no fits)",
    )
    ap.add_argument(
        "--cost", action="store_true", help="only the fit-time table (draw 0)"
    )
    ap.add_argument(
        "--lambda-a",
        action="store_true",
        help="only the lambda_A-at-the-chosen-width table (exact solver)",
    )
    args = ap.parse_args(argv)
    if args.lambda_a:
        lambda_at_width(args.only, args.settings, args.draws, data_dir(args.data))
        return
    if args.cost:
        cost(args.only, args.settings, data_dir(args.data))
        return
    if args.summarize:
        before = Path(args.summarize[0])
        print(summarize(before, Path(args.summarize[-1])))
        return
    todo = methods(args.rls, [], tuple(args.widths))
    if args.methods:
        todo = [m for m in todo if m[0] in args.methods]
    path = Path(args.csv)
    done = set()
    if path.exists():
        with open(path, newline="") as fh:
            done = {
                (r["dataset"], r["setting"], r["draw"], r["method"])
                for r in csv.DictReader(fh)
            }
    ddir = data_dir(args.data)
    for name in args.only:
        for setting in args.settings:
            rows = run_cell(name, setting, args.draws, todo, ddir, done)
            new = not path.exists()
            with open(path, "a", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=FIELDS)
                if new:
                    w.writeheader()
                w.writerows(rows)


if __name__ == "__main__":
    main()
