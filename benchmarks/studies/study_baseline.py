"""How should the labels-only check decide? Capture its evidence once, replay rules offline.

``capture`` fits ``LapSVM()`` and ``LapRLS()`` on the draws of ``bench_accuracy.py``
and keeps, per fit, what :func:`semisvm.models._baseline.choose_baseline` saw: the
per-point leave-one-out errors of the majority class, of the chosen model and of
its selection, of every supervised candidate and of the supervised selection;
the decision taken; and, on the unlabeled points, the errors of the graph model
(refitted with ``labels_only_check=None``), of the supervised model
(:func:`~semisvm.models._baseline.fit_baseline`) and of the majority class.
Records are pickled (arrays; not committed).

``replay`` applies decision rules to the records without refitting, checks that
``base`` (today's rule) reproduces every logged decision, and prints per cell
the mean error on U of each rule beside SVC-like supervised model, the graph
model and the majority class, with the number of fits each rule leaves to a
labels-only model.

Usage::

    python benchmarks/studies/study_baseline.py capture --only null_labels-1500 \\
        --settings n10 n100 --draws 20 --out /tmp/baseline.pkl
    python benchmarks/studies/study_baseline.py replay /tmp/baseline.pkl \\
        --rules base sign one_look
"""

from __future__ import annotations

import argparse
import collections
import pickle
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binom

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "accuracy"))
from study_mid_power import add_draw_arguments, draws  # noqa: E402


# ---------------------------------------------------------------- capture
def capture(args: argparse.Namespace) -> None:
    """Fit with spies on the check's inputs; refit without it; pickle per fit."""
    from semisvm import LapRLS, LapSVM, SolverOptions
    from semisvm.models import _autoreg as ar
    from semisvm.models import _baseline as bl
    from semisvm.models import _model

    seen: dict[str, Any] = {}
    real = {
        k: getattr(bl, k)
        for k in (
            "majority_loo",
            "_candidate_error",
            "loo_evidence",
            "selection_point_errors",
        )
    }
    choose = _model.choose_baseline

    def spy(key):
        def f(*a, **k):
            out = real[key](*a, **k)
            seen[key] = out
            return out

        return f

    def spy_choose(problem, params, reg):
        choice = choose(problem, params, reg)
        seen["choice"] = choice
        seen["cand_sel_pe"] = reg.info.get("selection_point_errors")
        if choice is not None and "supervised_gamma_a" in choice.info:
            sup = bl.BaselineChoice(
                "supervised",
                choice.info["supervised_gamma_a"],
                choice.info["supervised_gamma"],
                {},
            )
            seen["sup_pred"] = bl.fit_baseline(problem, params, sup)["transduction_"]
        return choice

    select_ev = ar.loo_evidence

    def spy_select(*a, **k):
        out = select_ev(*a, **k)
        seen["select_ev"] = out
        return out

    for k in real:
        setattr(bl, k, spy(k))
    _model.choose_baseline = spy_choose
    ar.loo_evidence = spy_select
    try:
        with open(args.out, "ab") as fh:
            for name, s, d, X, y, tr, ytr, pos, unl, _test in draws(args):
                maj_class = np.bincount(ytr[ytr != -1]).argmax()
                for cls in (LapSVM, LapRLS):
                    seen.clear()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        est = cls(random_state=0).fit(X[tr], ytr)
                        first = dict(seen)
                        graph = cls(
                            random_state=0,
                            options=SolverOptions(labels_only_check=None),
                        ).fit(X[tr], ytr)
                    seen.clear()
                    seen.update(first)
                    choice = seen.get("choice")
                    ev = seen.get("loo_evidence")
                    rec = dict(
                        dataset=name,
                        setting=s,
                        draw=int(d),
                        estimator=cls.__name__,
                        err=float(np.mean(est.transduction_[pos] != y[unl])),
                        err_graph=float(np.mean(graph.transduction_[pos] != y[unl])),
                        err_majority=float(np.mean(y[unl] != maj_class)),
                        err_sup=(
                            float(np.mean(seen["sup_pred"][pos] != y[unl]))
                            if "sup_pred" in seen
                            else float("nan")
                        ),
                        kind=None if choice is None else choice.kind,
                        fallback=None
                        if choice is None
                        else choice.info.get("fallback"),
                        maj_pe=seen.get("majority_loo"),
                        cand=seen.get("_candidate_error"),
                        cand_sel_pe=seen.get("cand_sel_pe"),
                        sup_errors=None if ev is None else ev.errors,
                        sup_pe=None if ev is None else ev.point_errors,
                        sup_sel_pe=seen.get("selection_point_errors"),
                        sup_pairs=None if ev is None else list(ev.pairs),
                        sup_scores=None if ev is None else ev.scores,
                        sup_per_point=None if ev is None else ev.per_point,
                        sel_pairs=_field(seen, "pairs"),
                        sel_scores=_field(seen, "scores"),
                        sel_per_point=_field(seen, "per_point"),
                        sel_point_errors=_field(seen, "point_errors"),
                        chosen=(est.gamma_a_, est.gamma_i_),
                        reg_info={
                            k: v
                            for k, v in est.regularization_selection_.items()
                            if k != "baseline"
                        },
                        info=None if choice is None else choice.info,
                        y_lab=ytr[ytr != -1],
                    )
                    pickle.dump(rec, fh)
                    fh.flush()
                print(name, s, d, flush=True)
    finally:
        for k, f in real.items():
            setattr(bl, k, f)
        _model.choose_baseline = choose
        ar.loo_evidence = select_ev


def _field(seen: dict, name: str) -> Any:
    ev = seen.get("select_ev")
    return None if ev is None else getattr(ev, name, None)


# ---------------------------------------------------------------- rules
def _arrays(rec: dict) -> dict | None:
    """The check's per-point evidence as the rule reads it (None where the
    check did not reach a comparison)."""
    info = rec["info"]
    if rec["kind"] is None or info is None or "supervised_loo_error" not in info:
        return None
    l_ = rec["y_lab"].size
    maj = np.asarray(rec["maj_pe"], float)
    cand_rate, cand_pe = rec["cand"][:2]
    cpe = None if cand_pe is None else np.asarray(cand_pe, float)
    csel = rec["cand_sel_pe"]
    csel = cpe if csel is None or np.shape(csel) != (l_,) else np.asarray(csel, float)
    sup_rate = info["supervised_loo_error"]
    k = int(np.flatnonzero(np.isclose(rec["sup_errors"], sup_rate))[-1])
    spe = None if rec["sup_pe"] is None else np.asarray(rec["sup_pe"][k], float)
    ssel = rec["sup_sel_pe"]
    ssel = spe if ssel is None else np.asarray(ssel, float)
    counts = np.bincount(rec["y_lab"])
    return dict(
        l=l_,
        maj=maj,
        cand=cpe,
        cand_rate=cand_rate,
        csel=csel,
        sup=spe,
        sup_rate=sup_rate,
        ssel=ssel,
        judged=counts.min() >= 5,
    )


def _cb(maj: np.ndarray, model: np.ndarray) -> tuple[float, float]:
    return float(np.sum(np.clip(maj - model, 0, None))), float(
        np.sum(np.clip(model - maj, 0, None))
    )


def beats_sd(maj, model, z=1.0, margin=2) -> bool:
    c, b = _cb(maj, model)
    return c - b >= max(margin, z * np.sqrt(b + c)) - 1e-9


def beats_sign(maj, model, p=0.1587) -> bool:
    """The exact one-sided sign test of the discordant labels at level ``p``."""
    c, b = _cb(maj, model)
    n = int(round(b + c))
    if c - b < 2 - 1e-9:
        return False
    return float(binom.sf(int(round(c)) - 1, n, 0.5)) <= p


def _decide(a: dict, beats, beats2=None) -> str:
    """Today's order: the chosen model against the majority class, then the
    supervised model; the supervised model against the chosen one where judged."""
    from semisvm.models._baseline import labels_prefer

    beats2 = beats if beats2 is None else beats2
    if not beats(a["maj"], a["csel"]):
        return "supervised" if beats2(a["maj"], a["ssel"]) else "majority"
    if (
        a["judged"]
        and labels_prefer(a["sup"], a["cand"], a["sup_rate"], a["cand_rate"], a["l"])
        and beats2(a["maj"], a["ssel"])
    ):
        return "supervised"
    return "none"


def rule_base(a):
    return _decide(a, beats_sd)


def rule_bonf2(a):
    """Both looks at sqrt(2) deviations."""
    return _decide(a, lambda m, x: beats_sd(m, x, np.sqrt(2)))


def rule_second_bonf(a):
    """The first look at one deviation, the second at sqrt(2)."""
    return _decide(a, beats_sd, lambda m, x: beats_sd(m, x, np.sqrt(2)))


def rule_sign(a):
    """The exact sign test at one deviation's level (0.159), both looks."""
    return _decide(a, beats_sign)


def rule_sign_half(a):
    """The exact sign test, each look at half of 0.159 (Bonferroni)."""
    return _decide(a, lambda m, x: beats_sign(m, x, 0.0794))


def rule_sign_second(a):
    """The exact sign test: first look at 0.159, second at half of it."""
    return _decide(a, beats_sign, lambda m, x: beats_sign(m, x, 0.0794))


def rule_margin3(a):
    """Three labels more against the majority class (and one deviation)."""
    return _decide(a, lambda m, x: beats_sd(m, x, margin=3))


def rule_second_margin3(a):
    """The second look (the supervised model, after the chosen one failed)
    needs three labels more."""
    return _decide(a, beats_sd, lambda m, x: beats_sd(m, x, margin=3))


def rule_first128(a):
    """The first look at 1.28 deviations (10%), the second at one and three labels."""
    return _decide(
        a, lambda m, x: beats_sd(m, x, 1.2816), lambda m, x: beats_sd(m, x, margin=3)
    )


def rule_first150(a):
    """The first look at 1.5 deviations, the second at one and three labels."""
    return _decide(
        a, lambda m, x: beats_sd(m, x, 1.5), lambda m, x: beats_sd(m, x, margin=3)
    )


def rule_margin3_real(a):
    """Three labels against a majority class that is right on some held-out
    labels (two against a tie of balanced labels); the second look three."""
    first = 3 if a["maj"].mean() < 1 - 1e-12 else 2
    return _decide(
        a,
        lambda m, x: beats_sd(m, x, margin=first),
        lambda m, x: beats_sd(m, x, margin=3),
    )


def rule_one_look(a, beats=beats_sd):
    """One model faces the majority class: per held-out label the better of the
    chosen and the supervised model by the other labels' selection errors
    (the pick's nested errors), then the single test."""
    from semisvm.models._baseline import labels_prefer

    pick = (
        "supervised"
        if a["judged"]
        and labels_prefer(a["sup"], a["cand"], a["sup_rate"], a["cand_rate"], a["l"])
        else "none"
    )
    # nested: the pick without label i, scored at i
    nested = np.empty(a["l"])
    for i in range(a["l"]):
        keep = np.arange(a["l"]) != i
        s_i = a["ssel"][keep].sum()
        c_i = a["csel"][keep].sum()
        nested[i] = a["ssel"][i] if s_i + 2 <= c_i else a["csel"][i]
    if beats(a["maj"], nested):
        return pick
    return "majority"


def rule_one_look_sign(a):
    return rule_one_look(a, beats_sign)


def majority_criterion(y_lab: np.ndarray) -> np.ndarray:
    """Per-point scale-free squared hinge of the majority class's continuous
    form: the intercept-only fit, whose LOO output for class c at point i is
    the mean of the other labels' +-1 targets."""
    from semisvm.solvers._loo import margins, scale_free_squared_hinge

    classes = np.unique(y_lab)
    C = classes.size
    Y = np.where(y_lab[:, None] == classes[None, :], 1.0, -1.0)
    if C == 2:
        Y = Y[:, 1:]
    n = Y.shape[0]
    O = (Y.sum(axis=0)[None, :] - Y) / (n - 1)
    return scale_free_squared_hinge(margins(O, Y))[1]


def _criterion_z(rec: dict, model_pts: np.ndarray) -> float:
    from semisvm.models._autoreg import paired_z

    return paired_z(majority_criterion(rec["y_lab"]) - model_pts)


def _with_criterion(rec, a, z_c, real_only=False):
    """Today's 0/1 looks, each also needing the paired z of the scale-free
    criterion against the majority class's continuous form above ``z_c``."""
    info = rec["reg_info"]
    pair = (info.get("gamma_a"), info.get("gamma_i"))
    pairs = [tuple(p) for p in (rec["sel_pairs"] or [])]
    cand_pts = None
    if pair in pairs and rec["sel_per_point"] is not None:
        cand_pts = np.asarray(rec["sel_per_point"][pairs.index(pair)], float)
    sup_scores = np.asarray(rec["sup_scores"], float)
    best = sup_scores.min()
    tied = np.flatnonzero(sup_scores <= best + 1e-9 * max(1.0, abs(best)))
    k_s = int(max(tied, key=lambda k: (rec["sup_pairs"][k][0], -k)))
    sup_pts = np.asarray(rec["sup_per_point"][k_s], float)
    zc = np.inf if cand_pts is None else _criterion_z(rec, cand_pts)
    zs = _criterion_z(rec, sup_pts)
    if real_only and a["maj"].mean() >= 1 - 1e-12:  # a tie: the 0/1 looks only
        zc = zs = np.inf
    a = dict(a)
    first = lambda m, x: beats_sd(m, x, margin=3 if m.mean() < 1 - 1e-12 else 2)  # noqa: E731
    second = lambda m, x: beats_sd(m, x, margin=3)  # noqa: E731
    return _decide(
        a,
        lambda m, x: first(m, x) and zc > z_c,
        lambda m, x: second(m, x) and zs > z_c,
    )


def rule_crit1(a, rec=None):
    return _with_criterion(rec, a, 1.0)


def rule_crit164(a, rec=None):
    return _with_criterion(rec, a, 1.6448536269514722)


def rule_crit0(a, rec=None):
    return _with_criterion(rec, a, 0.0)


def rule_crit1_real(a, rec=None):
    return _with_criterion(rec, a, 1.0, real_only=True)


RULES = {k[5:]: v for k, v in globals().items() if k.startswith("rule_")}
NEEDS_RECORD = {"crit1", "crit164", "crit0", "crit1_real"}


def replay(args: argparse.Namespace) -> None:
    recs = []
    with open(args.pickle, "rb") as fh:
        while True:
            try:
                recs.append(pickle.load(fh))
            except EOFError:
                break
    cells: dict = collections.defaultdict(list)
    mismatch = 0
    for r in recs:
        a = _arrays(r)
        out = {}
        for name in args.rules:
            if a is None:
                kind = "none"
            elif name in NEEDS_RECORD:
                kind = RULES[name](a, r)
            else:
                kind = RULES[name](a)
            out[name] = {
                "none": r["err_graph"],
                "majority": r["err_majority"],
                "supervised": r["err_sup"],
            }[kind]
            out[name + "#"] = kind != "none"
        if a is not None and RULES["base"](a) != (r["fallback"] or "none"):
            mismatch += 1
        cells[(r["dataset"], r["setting"], r["estimator"])].append(
            dict(
                out,
                err=r["err"],
                graph=r["err_graph"],
                maj=r["err_majority"],
                sup=r["err_sup"],
            )
        )
    print(f"# {len(recs)} fits; base differs from the logged decision in {mismatch}")
    head = ["cell", "n", "logged", "graph", "sup", "maj"] + args.rules
    print(" | ".join(head))
    means = collections.defaultdict(list)
    for key, rows in sorted(cells.items()):

        def m(k, rows=rows):
            v = np.array([x[k] for x in rows], float)
            return float(np.nanmean(v))

        vals = [f"{100 * m(k):5.1f}" for k in ("err", "graph", "sup", "maj")]
        for name in args.rules:
            vals.append(
                f"{100 * m(name):5.1f}({int(sum(x[name + '#'] for x in rows))})"
            )
            means[name].append(m(name))
        print(" | ".join([" ".join(key), str(len(rows))] + vals))
    print(
        "mean | " + " | ".join(f"{n} {100 * np.mean(v):.2f}" for n, v in means.items())
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    add_draw_arguments(c)
    c.add_argument("--out", required=True)
    r = sub.add_parser("replay")
    r.add_argument("pickle")
    r.add_argument("--rules", nargs="+", default=list(RULES))
    args = ap.parse_args()
    capture(args) if args.cmd == "capture" else replay(args)


if __name__ == "__main__":
    main()
