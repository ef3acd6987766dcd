"""Data generators, split helpers and loaders for the benchmark sets."""

from ._generators import hide_labels, make_clock, make_g50c, make_two_moons
from ._loaders import (
    BENCHMARK_DATASETS,
    DataFileNotFoundError,
    load_benchmark,
    load_coil20,
    load_coil20_b,
    load_csv,
    load_data_file,
    load_g50c,
    load_mat,
    load_npz,
    load_pcmac,
    load_svmlight,
    load_usps_full,
    load_uspst,
    load_uspst_b,
    resolve_data_dir,
)
from ._splits import TABLE2_SIZES, Split, paper_splits, split_labeled_unlabeled

__all__ = [
    "BENCHMARK_DATASETS",
    "DataFileNotFoundError",
    "Split",
    "TABLE2_SIZES",
    "hide_labels",
    "load_benchmark",
    "load_coil20",
    "load_coil20_b",
    "load_csv",
    "load_data_file",
    "load_g50c",
    "load_mat",
    "load_npz",
    "load_pcmac",
    "load_svmlight",
    "load_usps_full",
    "load_uspst",
    "load_uspst_b",
    "make_clock",
    "make_g50c",
    "make_two_moons",
    "paper_splits",
    "resolve_data_dir",
    "split_labeled_unlabeled",
]
