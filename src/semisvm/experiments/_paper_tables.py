"""Reference numbers and parameters of Melacci & Belkin (2011).

Source: S. Melacci and M. Belkin, "Laplacian Support Vector Machines Trained in
the Primal", Journal of Machine Learning Research 12:1149-1184, 2011 --
Table 3 (training times), Table 4 (errors of SVM, RLSC, LapRLSC, dual and
Newton LapSVM), Table 5 (Newton steps), Table 6 (times, PCG and line-search iterations), Table 7 (errors
of Newton and early-stopped PCG), Table 8 and Table 9 (parameters).

Every number is ``(mean, std)`` over the paper's 12 splits; errors are in
percent, times in seconds (Matlab 7.6 on a 2.33 GHz machine, Gram matrix and
Laplacian precomputed).  Transcribed by hand from the paper.
"""

from __future__ import annotations

__all__ = [
    "CITATION",
    "DATASET_LABELS",
    "CLASSIFIER_LABELS",
    "PAPER_DATASETS",
    "GRAPH_PARAMS",
    "REG_PARAMS",
    "TABLE3_BEST_PCG",
    "TABLE3",
    "TABLE4",
    "TABLE5",
    "TABLE6",
    "TABLE7",
]

CITATION = (
    "S. Melacci and M. Belkin, Laplacian Support Vector Machines Trained in the "
    "Primal, JMLR 12:1149-1184, 2011"
)

#: Data sets in the paper's order; the last two are not available here.
PAPER_DATASETS = (
    "g50c",
    "coil20_b",
    "pcmac",
    "uspst_b",
    "coil20",
    "uspst",
    "mnist3vs8",
    "facemit",
)

DATASET_LABELS = {
    "g50c": "G50C",
    "coil20_b": "COIL20(B)",
    "pcmac": "PCMAC",
    "uspst_b": "USPST(B)",
    "coil20": "COIL20",
    "uspst": "USPST",
    "mnist3vs8": "MNIST3VS8",
    "facemit": "FACEMIT",
}

CLASSIFIER_LABELS = {
    "svm": "SVM",
    "rlsc": "RLSC",
    "laprlsc": "LapRLSC",
    "dual": "LapSVM Dual (Original)",
    "newton": "LapSVM Primal (Newton)",
    "pcg_stability": "PCG [Stability Check]",
    "pcg_validation": "PCG [Validation Check]",
    "pcg_mixed": "PCG [Mixed Check]",
}

#: Table 8: Gaussian width sigma, number of neighbours nn, Laplacian degree p.
#: (MNIST3VS8: sigma is the degree 9 of a polynomial kernel.)
GRAPH_PARAMS: dict[str, tuple[float, int, int]] = {
    "g50c": (17.5, 50, 5),
    "coil20_b": (0.6, 2, 1),
    "pcmac": (2.7, 50, 5),
    "uspst_b": (9.4, 10, 2),
    "coil20": (0.6, 2, 1),
    "uspst": (9.4, 10, 2),
    "mnist3vs8": (9, 20, 3),
    "facemit": (4.3, 6, 1),
}

# Tables 8 (svm .. newton) and 9 (pcg_*): gamma_A, gamma_I (None: supervised).
_REG = """
g50c      1e-1 -   1 -     1e-6 1e-2  1 10     1e-1 10   1e-1 10   1e-1 10   1e-1 10
coil20_b  1e-6 -   1e-6 -  1e-6 1     1e-2 100 1e-6 1    1e-6 1    1 100     1e-6 1
pcmac     1e-6 -   1e-6 -  1e-6 1e-2  1e-6 1e-4 1e-6 1  1e-4 1    1e-4 1    1e-6 1e-1
uspst_b   1e-6 -   1e-1 -  1e-4 1e-1  1e-6 1e-2 1e-6 1e-2 1e-6 1  1e-6 1    1e-6 1
coil20    1e-6 -   1e-6 -  1e-6 1     1e-6 10  1e-6 1    1e-6 1    1e-6 1    1e-6 1
uspst     1e-1 -   1e-6 -  1e-6 1e-1  1e-6 1e-2 1e-4 1  1e-4 1    1e-4 1    1e-4 1
mnist3vs8 1e-6 -   1e-6 -  1e-6 1e-2  1e-6 1e-2 1e-6 1e-2 1e-6 1e-1 1e-6 1e-1 1e-6 1e-1
"""

_CLF_ORDER = (
    "svm",
    "rlsc",
    "laprlsc",
    "dual",
    "newton",
    "pcg_stability",
    "pcg_validation",
    "pcg_mixed",
)


def _parse_reg(text: str) -> dict[str, dict[str, tuple[float, float | None]]]:
    out: dict[str, dict[str, tuple[float, float | None]]] = {}
    for line in text.strip().splitlines():
        tok = line.split()
        vals = tok[1:]
        d = {}
        for k, clf in enumerate(_CLF_ORDER):
            ga, gi = vals[2 * k], vals[2 * k + 1]
            d[clf] = (float(ga), None if gi == "-" else float(gi))
        out[tok[0]] = d
    return out


#: ``REG_PARAMS[dataset][classifier] = (gamma_A, gamma_I)``.
REG_PARAMS = _parse_reg(_REG)

#: Which early-stopping rule Table 3's "Primal (PCG)" column took per data set
#: (the best in accuracy; identified from the matching Table 6 entry).
TABLE3_BEST_PCG = {
    "g50c": "pcg_validation",
    "coil20_b": "pcg_validation",
    "pcmac": "pcg_validation",
    "uspst_b": "pcg_stability",
    "coil20": "pcg_mixed",
    "uspst": "pcg_validation",
    "mnist3vs8": "pcg_stability",
    "facemit": "pcg_stability",
}

Stat = tuple[float, float]

#: Table 5: Newton's steps to the optimum of the primal LapSVM problem.
TABLE5: dict[str, Stat] = {
    "g50c": (1, 0),
    "coil20_b": (2.67, 0.78),
    "pcmac": (2.33, 0.49),
    "uspst_b": (4.17, 0.58),
    "coil20": (2.67, 0.75),
    "uspst": (4.26, 0.76),
    "mnist3vs8": (5, 0),
}

#: Table 3: training time (s) of dual, Newton and the best early-stopped PCG.
TABLE3: dict[str, dict[str, Stat | None]] = {
    "g50c": {"dual": (0.155, 0.004), "newton": (0.134, 0.006), "pcg": (0.043, 0.006)},
    "coil20_b": {
        "dual": (0.311, 0.012),
        "newton": (0.367, 0.097),
        "pcg": (0.097, 0.026),
    },
    "pcmac": {"dual": (14.82, 0.104), "newton": (15.756, 0.285), "pcg": (1.967, 0.269)},
    "uspst_b": {
        "dual": (1.196, 0.015),
        "newton": (1.4727, 0.2033),
        "pcg": (0.300, 0.030),
    },
    "coil20": {"dual": (6.321, 0.441), "newton": (7.26, 1.921), "pcg": (3.487, 1.734)},
    "uspst": {"dual": (12.25, 0.2), "newton": (17.74, 2.44), "pcg": (2.032, 0.434)},
    "mnist3vs8": {
        "dual": (2064.18, 3.1),
        "newton": (2824.174, 105.07),
        "pcg": (114.441, 0.235),
    },
    "facemit": {"dual": None, "newton": None, "pcg": (35.728, 0.868)},
}

# Table 4 (svm, rlsc, laprlsc, dual, newton) and Table 7 (newton, pcg_*): errors
# in % on U, V, T as "mean std" pairs.
_ERRORS = """
g50c svm       9.33 2     9.83 3.46   10.06 2.8
g50c rlsc      10.43 5.26 10.17 4.86  11.21 4.98
g50c laprlsc   6.03 1.32  6.17 3.66   6.54 2.11
g50c dual      5.52 1.15  5.67 2.67   5.51 1.65
g50c newton    6.16 1.48  6.17 3.46   7.27 2.87
g50c pcg_stability  6.13 1.46 6.17 3.46 7.27 2.87
g50c pcg_validation 6.16 1.48 6.17 3.46 7.27 2.87
g50c pcg_mixed      6.16 1.48 6.17 3.46 7.27 2.87
coil20_b svm     16.23 2.63 18.54 6.2   15.93 3
coil20_b rlsc    16.22 2.64 18.54 6.17  15.97 3.02
coil20_b laprlsc 8.067 2.05 7.92 3.96   8.59 1.9
coil20_b dual    8.31 2.19  8.13 4.01   8.68 2.04
coil20_b newton  8.16 2.04  7.92 3.96   8.56 1.9
coil20_b pcg_stability  8.81 2.23 8.13 3.71 8.84 1.93
coil20_b pcg_validation 8.32 2.28 8.96 4.05 8.45 1.58
coil20_b pcg_mixed      8.84 2.28 8.13 3.71 8.84 1.96
pcmac svm      19.65 6.91 20.83 6.85  20.09 6.91
pcmac rlsc     19.63 6.91 20.67 6.95  20.04 6.93
pcmac laprlsc  9.67 0.74  7.67 4.08   9.34 1.5
pcmac dual     10.78 1.83 9.17 4.55   11.05 2.94
pcmac newton   9.68 0.77  7.83 4.04   9.37 1.51
pcmac pcg_stability  9.65 0.78 7.83 4.04 9.42 1.50
pcmac pcg_validation 9.67 0.76 7.83 4.04 9.40 1.50
pcmac pcg_mixed      9.79 0.72 7.67 3.80 9.42 1.28
uspst_b svm     17 2.74    18.17 5.94  17.1 3.21
uspst_b rlsc    17.21 3.02 17.5 5.13   17.27 2.72
uspst_b laprlsc 8.87 1.88  10.17 4.55  9.42 2.51
uspst_b dual    8.84 2.2   8.67 4.38   9.68 2.48
uspst_b newton  8.72 2.15  9.33 3.85   9.42 2.34
uspst_b pcg_stability  9.11 2.14 10.50 4.36 9.70 2.55
uspst_b pcg_validation 9.10 2.17 10.50 4.36 9.75 2.59
uspst_b pcg_mixed      9.09 2.17 10.50 4.36 9.70 2.55
coil20 svm     29.49 2.24 31.46 7.79  28.98 2.74
coil20 rlsc    29.51 2.23 31.46 7.79  28.96 2.72
coil20 laprlsc 10.35 2.3  9.79 4.94   11.3 2.17
coil20 dual    10.51 2.06 9.79 4.94   11.44 2.39
coil20 newton  10.54 2.03 9.79 4.94   11.32 2.19
coil20 pcg_stability  12.42 2.68 10.63 4.66 12.92 2.14
coil20 pcg_validation 13.07 2.73 12.08 4.75 13.52 2.12
coil20 pcg_mixed      12.43 2.69 10.42 4.63 12.87 2.20
uspst svm      23.84 3.26 24.67 4.54  23.6 2.32
uspst rlsc     23.95 3.53 25.33 4.03  24.01 3.43
uspst laprlsc  15.12 2.9  14.67 3.94  16.44 3.53
uspst dual     14.36 2.55 15.17 4.04  14.91 2.83
uspst newton   14.98 2.88 15 3.57     15.38 3.55
uspst pcg_stability  15.60 3.45 15.67 3.60 16.11 3.95
uspst pcg_validation 15.40 3.38 15.67 3.98 15.94 4.04
uspst pcg_mixed      15.45 3.53 15.50 3.92 15.94 4.08
mnist3vs8 svm     8.82 1.11 7.92 4.73 8.22 1.36
mnist3vs8 rlsc    8.82 1.11 7.92 4.73 8.22 1.36
mnist3vs8 laprlsc 1.95 0.05 1.67 1.44 1.8 0.3
mnist3vs8 dual    2.29 0.17 1.67 1.44 1.98 0.15
mnist3vs8 newton  2.2 0.14  1.67 1.44 2.02 0.22
mnist3vs8 pcg_stability  2.11 0.06 1.67 1.44 1.93 0.2
mnist3vs8 pcg_validation 2.11 0.06 1.67 1.44 1.93 0.2
mnist3vs8 pcg_mixed      2.11 0.06 1.67 1.44 1.93 0.2
facemit svm   39.8 2.34 38 1.15 34.61 3.96
facemit rlsc  39.8 2.34 38 1.15 34.61 3.96
facemit pcg_stability  29.97 2.51 36 3.46 27.97 5.38
facemit pcg_validation 29.97 2.51 36 3.46 27.97 5.38
facemit pcg_mixed      29.97 2.51 36 3.46 27.97 5.38
"""

# Table 6: time (s), PCG iterations, line-search iterations per PCG iteration.
_TABLE6 = """
g50c dual            0.155 0.004   - -          - -
g50c newton          0.134 0.006   - -          - -
g50c pcg_stability   0.044 0.006   20 0         1 0
g50c pcg_validation  0.043 0.006   20.83 2.89   1 0
g50c pcg_mixed       0.044 0.006   20.83 2.89   1 0
coil20_b dual            0.311 0.012   - -           - -
coil20_b newton          0.367 0.097   - -           - -
coil20_b pcg_stability   0.198 0.074   74.67 28.4    2.41 1.83
coil20_b pcg_validation  0.097 0.026   37.33 10.42   1 0
coil20_b pcg_mixed       0.206 0.089   78.67 34.42   2.38 1.79
pcmac dual            14.8203 0.104  - -           - -
pcmac newton          15.756 0.285   - -           - -
pcmac pcg_stability   1.897 0.040    38.00 0       1.16 0.45
pcmac pcg_validation  1.967 0.269    39.58 5.48    1.15 0.44
pcmac pcg_mixed       4.610 1.602    91.83 32.24   3.70 3.09
uspst_b dual            1.196 0.015    - -           - -
uspst_b newton          1.4727 0.2033  - -           - -
uspst_b pcg_stability   0.300 0.030    58.58 5.48    1.74 0.90
uspst_b pcg_validation  0.281 0.086    55.42 17.11   1.68 0.90
uspst_b pcg_mixed       0.324 0.059    63.33 12.38   1.70 0.89
coil20 dual            6.321 0.441   - -           - -
coil20 newton          7.26 1.921    - -           - -
coil20 pcg_stability   3.297 1.471   65.47 30.35   2.53 1.90
coil20 pcg_validation  1.769 0.299   34.07 6.12    3.37 2.22
coil20 pcg_mixed       3.487 1.734   69.53 35.86   2.48 1.87
uspst dual            12.25 0.2      - -           - -
uspst newton          17.74 2.44     - -           - -
uspst pcg_stability   1.953 0.403    41.17 8.65    3.11 1.73
uspst pcg_validation  2.032 0.434    42.91 9.38    3.13 1.73
uspst pcg_mixed       2.158 0.535    45.60 11.66   3.12 1.72
mnist3vs8 dual            2064.18 3.1      - -     - -
mnist3vs8 newton          2824.174 105.07  - -     - -
mnist3vs8 pcg_stability   114.441 0.235    110 0   5.58 2.79
mnist3vs8 pcg_validation  124.69 0.335     110 0   5.58 2.79
mnist3vs8 pcg_mixed       124.974 0.414    110 0   5.58 2.79
facemit pcg_stability   35.728 0.868  3 0  1 0
facemit pcg_validation  35.728 0.868  3 0  1 0
facemit pcg_mixed       35.728 0.868  3 0  1 0
"""


def _pairs(tokens: list[str]) -> list[Stat | None]:
    out: list[Stat | None] = []
    for k in range(0, len(tokens), 2):
        m, s = tokens[k], tokens[k + 1]
        out.append(None if m == "-" else (float(m), float(s)))
    return out


def _parse(text: str, keys: tuple[str, ...]) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {}
    for line in text.strip().splitlines():
        tok = line.split()
        vals = _pairs(tok[2:])
        out.setdefault(tok[0], {})[tok[1]] = dict(zip(keys, vals, strict=True))
    return out


_ERR = _parse(_ERRORS, ("U", "V", "T"))
_T4 = ("svm", "rlsc", "laprlsc", "dual", "newton")
_T7 = ("newton", "pcg_stability", "pcg_validation", "pcg_mixed")

#: Table 4: ``TABLE4[dataset][classifier][set] = (mean, std)``, set in U, V, T.
#: (FACEMIT's semi-supervised row is PCG, listed in TABLE7.)
TABLE4 = {d: {c: v for c, v in row.items() if c in _T4} for d, row in _ERR.items()}
#: Table 7: ``TABLE7[dataset][classifier][set] = (mean, std)``.
TABLE7 = {d: {c: v for c, v in row.items() if c in _T7} for d, row in _ERR.items()}
#: Table 6: ``TABLE6[dataset][classifier][metric]``, metric in time, pcg_iter,
#: ls_iter (line-search intervals per PCG iteration).
TABLE6 = _parse(_TABLE6, ("time", "pcg_iter", "ls_iter"))
