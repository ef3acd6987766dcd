"""Which candidate should the auto rule fit? Capture its evidence once, replay rules offline.

``capture`` fits ``LapSVM()`` and ``LapRLS()`` on the draws of ``bench_accuracy.py``
and keeps, per fit, everything the ``"auto"`` rule saw
(:func:`semisvm.models._autoreg.loo_evidence`): the candidates (gamma_a, gamma_i),
each one's per-point scale-free LOO criterion and LOO errors, the cut ratio of
each alternative against the defaults (:func:`~semisvm.models._autoreg.cut_ratio`),
and, refitted with its weights given explicitly, each candidate's error on U;
SVC on the labels too.  ``--extra-pairs`` adds candidates to the rule's list (e.g.
graph-trusting models with a stronger overall regularization) so their evidence
is captured beside the others.  Records are pickled (arrays; not committed).

``replay`` applies selection rules to the captured records without refitting,
checks that ``base`` (today's rule) reproduces every logged choice, prints a table
per cell (mean error on U; the oracle = per draw the best of the graph-trusting
model, the supervised model and SVC, chosen with the true labels of U), and
appends the per-rule summary to ``--csv``.

Usage::

    python benchmarks/studies/study_choice.py capture --only diabetes_median \\
        --settings 5/class 10/class --draws 10 --out /tmp/choice.pkl
    python benchmarks/studies/study_choice.py replay /tmp/choice.pkl \\
        --rules base errors_first one_se graph_first best_graph
"""

from __future__ import annotations

import argparse
import ast
import collections
import csv
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1] / "accuracy"))
import bench_accuracy as ba  # noqa: E402
from study_mid_power import add_draw_arguments, draws  # noqa: E402

from semisvm.models._autoreg import Z_SWITCH as Z  # noqa: E402


# ---------------------------------------------------------------- capture
def capture(args: argparse.Namespace) -> None:
    """Fit, record the rule's evidence and every candidate's error on U."""
    from semisvm import LapRLS, LapSVM
    from semisvm.models import _autoreg as ar

    extra = [tuple(ast.literal_eval(p)) for p in args.extra_pairs]
    seen: dict = {}
    loo_evidence, candidates = ar.loo_evidence, ar._candidates

    def spy(*a, **k):
        seen["ev"] = loo_evidence(*a, **k)
        return seen["ev"]

    def more(*a):
        out = candidates(*a)
        return out + [p for p in extra if p not in out] if len(out) > 1 else out

    ar.loo_evidence, ar._candidates = spy, more
    try:
        with open(args.out, "ab") as fh:
            for name, s, d, X, y, tr, ytr, pos, unl, test in draws(args):
                lab = tr[ytr != -1]
                svc = ba.run_method("SVC", X, y, lab, unl, test, False)[0]
                for cls in (LapSVM, LapRLS):
                    seen.clear()
                    est = _fit(cls, X[tr], ytr)
                    rec = dict(
                        dataset=name,
                        setting=s,
                        draw=int(d),
                        estimator=cls.__name__,
                        svc=svc,
                        err=float(np.mean(est.transduction_[pos] != y[unl])),
                        extra=extra,
                    )
                    if est.regularization_selection_.get("rule") == "loo":
                        ev = seen["ev"]
                        rec.update(
                            pairs=list(ev.pairs),
                            per_point=ev.per_point,
                            scores=ev.scores,
                            errors=ev.errors,
                            point_errors=ev.point_errors,
                            cuts=[None]
                            + [ar.cut_ratio(ev, 0, k) for k in range(1, len(ev.pairs))],
                            cand_err=[
                                float(
                                    np.mean(
                                        _fit(cls, X[tr], ytr, ga, gi).transduction_[pos]
                                        != y[unl]
                                    )
                                )
                                for ga, gi in ev.pairs
                            ],
                        )
                    pickle.dump(rec, fh)
                    fh.flush()
                print(name, s, d, flush=True)
    finally:
        ar.loo_evidence, ar._candidates = loo_evidence, candidates


def _fit(cls, X, y, gamma_a="auto", gamma_i="auto"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(random_state=0, gamma_a=gamma_a, gamma_i=gamma_i).fit(X, y)


# ---------------------------------------------------------------- rules
def paired_z(diff: np.ndarray) -> float:
    """The rule's own paired z (``semisvm.models._autoreg.paired_z``)."""
    from semisvm.models._autoreg import paired_z

    return paired_z(np.asarray(diff))


def graded(r: float) -> float:
    """The rule's own threshold (``semisvm.models._autoreg.graded_threshold``)."""
    from semisvm.models._autoreg import graded_threshold

    return graded_threshold(r)


def supervised(rec: dict) -> list[int]:
    return [k for k, p in enumerate(rec["pairs"]) if p[1] == 0.0]


def lowest(rec: dict, rows: list[int]) -> int:
    """``supervised_choice``: the lowest criterion, float ties to the largest gamma_a."""
    sc = rec["scores"]
    best = min(sc[k] for k in rows)
    tied = [k for k in rows if sc[k] <= best + 1e-9 * max(1.0, abs(best))]
    return max(tied, key=lambda k: (rec["pairs"][k][0], -k))


def switch(rec: dict, k_prior: int, k_alt: int) -> int:
    """Today's test: leave ``k_prior`` for ``k_alt`` when the paired criterion z
    exceeds the graded threshold of the cut ratio (measured against the
    defaults) and the LOO errors are not significantly more."""
    pp, pe = rec["per_point"], rec["point_errors"]
    z = paired_z(pp[k_prior] - pp[k_alt])
    more = paired_z(pe[k_alt] - pe[k_prior]) > Z
    need = Z
    if z > 0 and not more and rec["cuts"][k_alt] is not None:
        need = graded(rec["cuts"][k_alt]["cut_ratio"])
    return k_alt if (z > need and not more) else k_prior


def _original(rec: dict) -> list[int]:
    """The rule's own candidates: the defaults and the supervised ones."""
    return [0] + supervised(rec)


def rule_base(rec: dict) -> int:
    """Today's rule: the test against the alternative with the lowest criterion
    (ties: fewer LOO errors, then the first), then, if it switched, floating-point
    ties of the criterion to the largest gamma_a (``select_regularization``)."""
    sup = supervised(rec)
    k_best = min(sup, key=lambda k: (rec["scores"][k], rec["errors"][k], k))
    return lowest(rec, sup) if switch(rec, 0, k_best) != 0 else 0


def rule_errors_first(rec: dict) -> int:
    """The supervised alternative with the fewest LOO errors, then the lowest
    criterion (the issue's "0-1 error with a scale-free tie-break")."""
    sup = supervised(rec)
    k = min(sup, key=lambda j: (round(rec["errors"][j], 9), rec["scores"][j], -j))
    return switch(rec, 0, k)


def rule_one_se(rec: dict) -> int:
    """The largest gamma_a within one paired standard error of the lowest
    criterion (ESL 7.10)."""
    sup = supervised(rec)
    k0 = lowest(rec, sup)
    ok = [k for k in sup if paired_z(rec["per_point"][k] - rec["per_point"][k0]) <= 1]
    return switch(rec, 0, max(ok, key=lambda k: rec["pairs"][k][0]))


def rule_graph_first(rec: dict) -> int:
    """With ``--extra-pairs`` graph candidates: the best of them replaces the
    defaults at z > Z_SWITCH (paired criterion, no more LOO errors), then today's
    test against the supervised one (cut ratios measured against the defaults)."""
    graph = [k for k, p in enumerate(rec["pairs"]) if p[1] > 0 and k > 0]
    k_prior = 0
    if graph:
        kb = min(graph, key=lambda k: (rec["scores"][k], rec["errors"][k], k))
        if switch_plain(rec, 0, kb):
            k_prior = kb
    return switch(rec, k_prior, lowest(rec, supervised(rec)))


def switch_plain(rec: dict, k0: int, k1: int) -> bool:
    z = paired_z(rec["per_point"][k0] - rec["per_point"][k1])
    more = paired_z(rec["point_errors"][k1] - rec["point_errors"][k0]) > Z
    return bool(z > Z and not more)


def rule_best_graph(rec: dict) -> int:
    """Not a rule: per draw the graph-trusting candidate with the lowest error
    on U (what a perfect choice among the graph candidates would give)."""
    graph = [k for k, p in enumerate(rec["pairs"]) if p[1] > 0]
    return min(graph, key=lambda k: rec["cand_err"][k])


RULES = {
    "base": rule_base,
    "errors_first": rule_errors_first,
    "one_se": rule_one_se,
    "graph_first": rule_graph_first,
    "best_graph": rule_best_graph,
}


# ---------------------------------------------------------------- replay
def load(paths: list[str]) -> list[dict]:
    out = []
    for p in paths:
        with open(p, "rb") as fh:
            while True:
                try:
                    out.append(pickle.load(fh))
                except EOFError:
                    break
    return [r for r in out if "cand_err" in r]


def oracle(rec: dict) -> float:
    k_sup = lowest(rec, supervised(rec))
    return min(rec["cand_err"][0], rec["cand_err"][k_sup], rec["svc"])


def replay(args: argparse.Namespace) -> None:
    recs = load(args.records)
    plain = [rec for rec in recs if not rec.get("extra")]
    same = sum(rec["cand_err"][rule_base(rec)] == rec["err"] for rec in plain)
    print(f"{len(recs)} fits; today's rule reproduced in {same} of {len(plain)}")
    cells = collections.defaultdict(list)
    for rec in recs:
        cells[(rec["dataset"], rec["setting"], rec["estimator"])].append(rec)
    names = list(args.rules)
    rows, totals = [], collections.defaultdict(list)
    above = collections.Counter()
    for key, rs in sorted(cells.items()):
        orc = float(np.mean([oracle(r) for r in rs]))
        svc = float(np.mean([r["svc"] for r in rs]))
        errs = [float(np.mean([r["cand_err"][RULES[n](r)] for r in rs])) for n in names]
        for n, e in zip(names, errs, strict=True):
            totals[n].append(e)
            above[n, "oracle"] += e > orc + 0.01 + 1e-9
            above[n, "svc"] += e > svc + 0.01 + 1e-9
        rows.append([*key, len(rs), orc, svc, *errs])
    header = ["data set", "setting", "estimator", "draws", "oracle", "SVC", *names]
    fmt = [str] * 4 + [lambda v: f"{100 * v:.2f}"] * (2 + len(names))
    table = [[f(v) for f, v in zip(fmt, row, strict=True)] for row in rows]
    mean = ["mean", "", "", "", "", ""] + [
        f"{100 * np.mean(totals[n]):.2f}" for n in names
    ]
    oracle_1 = ["cells > oracle + 1", "", "", "", "", ""] + [
        str(above[n, "oracle"]) for n in names
    ]
    svc_1 = ["cells > SVC + 1", "", "", "", "", ""] + [
        str(above[n, "svc"]) for n in names
    ]
    print(ba.markdown_table(header, [*table, mean, oracle_1, svc_1], fmt=str))
    if args.csv:
        with open(args.csv, "a", newline="") as fh:
            w = csv.writer(fh)
            for row in rows:
                for n, e in zip(names, row[6:], strict=True):
                    w.writerow([*row[:6], n, e, args.label])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    cap = sub.add_parser("capture")
    add_draw_arguments(cap)
    cap.add_argument("--out", required=True, help="pickle file (appended)")
    cap.add_argument("--extra-pairs", nargs="*", default=[], help='e.g. "(1e-4, 100)"')
    rep = sub.add_parser("replay")
    rep.add_argument("records", nargs="+")
    rep.add_argument("--rules", nargs="+", default=list(RULES), choices=list(RULES))
    rep.add_argument("--csv", default=None, help="append the per-cell errors here")
    rep.add_argument("--label", default="", help="the CSV's last column")
    args = ap.parse_args(argv)
    (capture if args.command == "capture" else replay)(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
