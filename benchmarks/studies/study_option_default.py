"""Study: the benchmark tables with another default of a solver option.

Sets ``semisvm.models._options.OPTION_DEFAULTS[name] = value`` (what an estimator
with ``options=None`` fits with) for every ``--set name=value``, then runs
``bench_accuracy.py`` (default) or, with ``--peers``, ``bench_peers.py`` with the
arguments after ``--`` and ``--no-save`` (the tables go to stdout and the rows to
``--csv``: the results files of the defaults stay theirs), so that its results
can be set beside the table's (same draws, same code otherwise):

    python benchmarks/studies/study_option_default.py --set stability_value_tol=0.1 -- --heldout --draws 10 --methods LapSVM LapRLS --csv benchmarks/results/study_value_tol01_heldout.csv
    python benchmarks/studies/study_option_default.py --set stability_value_tol=0.1 --peers -- --only usps5
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "accuracy"))


def split_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the study's own arguments, the benchmark's: those after ``--``)."""
    if "--" not in argv:
        return argv, []
    return argv[: argv.index("--")], argv[argv.index("--") + 1 :]


def run_benchmark(rest: list[str], peers: bool = False) -> int:
    """``bench_accuracy.py`` (or ``bench_peers.py``) with ``rest``."""
    if peers:
        import bench_peers

        return int(bench_peers.main(rest) or 0)
    import bench_accuracy

    return int(bench_accuracy.main(rest) or 0)


def main() -> int:
    own, rest = split_args(sys.argv[1:])
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--peers", action="store_true")
    args = ap.parse_args(own)
    from semisvm.models import _options

    for item in args.set:
        name, _, raw = item.partition("=")
        if name not in _options.OPTION_DEFAULTS:
            ap.error(f"unknown option {name!r}")
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            value = raw
        _options.OPTION_DEFAULTS[name] = value
        print(f"study: OPTION_DEFAULTS[{name!r}] = {value!r}", flush=True)
    return run_benchmark([*rest, "--no-save"], peers=args.peers)


if __name__ == "__main__":
    raise SystemExit(main())
