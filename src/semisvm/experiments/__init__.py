"""Reproduction of published experiments (``semisvm reproduce``).

:func:`run_reproduction` runs the protocol of Melacci & Belkin (2011), Section 6,
and writes the paper's Tables 3, 4, 6 and 7 with our numbers next to the
paper's; :mod:`._paper_tables` holds the paper's reference numbers.
"""

from ._paper_tables import CITATION, REG_PARAMS, TABLE3, TABLE4, TABLE6, TABLE7
from ._reproduce import (
    ALL_CLASSIFIERS,
    DEFAULT_DATASETS,
    ReproductionResult,
    plot_error_vs_iteration,
    plot_two_moons_figures,
    run_reproduction,
)

__all__ = [
    "ALL_CLASSIFIERS",
    "CITATION",
    "DEFAULT_DATASETS",
    "REG_PARAMS",
    "ReproductionResult",
    "TABLE3",
    "TABLE4",
    "TABLE6",
    "TABLE7",
    "plot_error_vs_iteration",
    "plot_two_moons_figures",
    "run_reproduction",
]
