"""Synthetic data sets used in the papers: two moons, the "clock", G50C-style."""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri
from sklearn.utils import check_random_state

__all__ = ["make_two_moons", "make_clock", "make_g50c", "hide_labels"]


def make_two_moons(
    n_samples: int = 200,
    *,
    noise: float = 0.05,
    n_labeled_per_class: int | None = 1,
    sampling: str = "even",
    random_state=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two interleaving half circles (the papers' "two moons").

    Parameters
    ----------
    n_samples : int, default=200
        Total number of points (split evenly between the two moons).
    noise : float, default=0.05
        Standard deviation of the Gaussian noise added to each coordinate.
    sampling : {'even', 'uniform'}, default='even'
        ``'even'`` spaces the points evenly along each arc before adding noise (the
        regular moons of the papers' figures); ``'uniform'`` draws the angles at
        random (as scikit-learn's ``make_moons(shuffle=True)``), which leaves gaps
        and lets outliers bridge the moons.
    n_labeled_per_class : int or None, default=1
        How many points per class keep their label in ``y``; ``None`` keeps all.
    random_state : int, RandomState or None

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,)
        Labels in {0, 1}, ``-1`` for the hidden ones.
    y_true : ndarray of shape (n_samples,)
        All labels.
    """
    rng = check_random_state(random_state)
    n0 = n_samples // 2
    n1 = n_samples - n0
    if sampling == "even":
        t0, t1 = np.linspace(0, np.pi, n0), np.linspace(0, np.pi, n1)
    elif sampling == "uniform":
        t0, t1 = rng.uniform(0, np.pi, n0), rng.uniform(0, np.pi, n1)
    else:
        raise ValueError(f"sampling must be 'even' or 'uniform', got {sampling!r}.")
    X0 = np.c_[np.cos(t0), np.sin(t0)]
    X1 = np.c_[1.0 - np.cos(t1), 0.5 - np.sin(t1)]
    X = np.r_[X0, X1] + rng.normal(scale=noise, size=(n_samples, 2))
    y_true = np.r_[np.zeros(n0, int), np.ones(n1, int)]
    perm = rng.permutation(n_samples)
    X, y_true = X[perm], y_true[perm]
    return X, hide_labels(y_true, n_labeled_per_class, rng), y_true


def make_clock(
    n_samples: int = 400,
    *,
    noise: float = 0.02,
    n_labeled_per_class: int | None = 1,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The two-class "clock" of Melacci & Belkin (2011), Figure 1.

    Class 0 is the circular border of the clock (radius 1); class 1 is the two
    hands, segments from the centre (an hour hand of length 0.5, a minute hand of
    length 0.8).  A supervised classifier with one label per class cuts the plane
    half-way between the two labeled points; manifold regularization follows the
    circle and the hands.

    Returns
    -------
    X, y, y_true
        As in :func:`make_two_moons`.
    """
    rng = check_random_state(random_state)
    n_border = n_samples // 2
    n_hands = n_samples - n_border
    th = rng.uniform(0, 2 * np.pi, n_border)
    border = np.c_[np.cos(th), np.sin(th)]
    n_hour = n_hands // 2
    n_min = n_hands - n_hour
    hour_dir = np.array([np.cos(np.pi / 6), np.sin(np.pi / 6)])  # "2 o'clock"
    min_dir = np.array([np.cos(-np.pi / 2 - 0.3), np.sin(-np.pi / 2 - 0.3)])
    hour = rng.uniform(0.0, 0.5, n_hour)[:, None] * hour_dir
    minute = rng.uniform(0.0, 0.8, n_min)[:, None] * min_dir
    X = np.r_[border, hour, minute] + rng.normal(scale=noise, size=(n_samples, 2))
    y_true = np.r_[np.zeros(n_border, int), np.ones(n_hands, int)]
    perm = rng.permutation(n_samples)
    X, y_true = X[perm], y_true[perm]
    return X, hide_labels(y_true, n_labeled_per_class, rng), y_true


def make_g50c(
    n_samples: int = 550,
    *,
    n_features: int = 50,
    bayes_error: float = 0.05,
    n_labeled_per_class: int | None = None,
    random_state=None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """G50C-style data: two unit-covariance Gaussians with a set Bayes error.

    The means are ``+-m / sqrt(d) * 1`` with ``m = Phi^{-1}(1 - bayes_error)`` so that
    the Bayes-optimal (linear) classifier errs with probability ``bayes_error``.

    Returns
    -------
    X, y, y_true
        As in :func:`make_two_moons`, labels in {-1... } replaced by {0, 1}.
    """
    rng = check_random_state(random_state)
    m = ndtri(1.0 - bayes_error)
    mu = np.full(n_features, m / np.sqrt(n_features))
    y_true = rng.randint(0, 2, n_samples)
    X = rng.normal(size=(n_samples, n_features)) + np.where(
        y_true[:, None] == 1, mu, -mu
    )
    return X, hide_labels(y_true, n_labeled_per_class, rng), y_true


def hide_labels(y_true, n_labeled_per_class, random_state=None) -> np.ndarray:
    """Keep ``n_labeled_per_class`` labels per class, mark the rest ``-1``."""
    y_true = np.asarray(y_true)
    if n_labeled_per_class is None:
        return y_true.copy()
    rng = check_random_state(random_state)
    y = np.full_like(y_true, -1)
    for c in np.unique(y_true):
        idx = np.flatnonzero(y_true == c)
        keep = rng.choice(idx, size=min(n_labeled_per_class, idx.size), replace=False)
        y[keep] = c
    return y
