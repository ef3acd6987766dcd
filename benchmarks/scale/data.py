"""Synthetic data of the scale benchmark (not part of the package).

``manifold``: X = tanh(Z W) with Z ~ N(0, I_10) and W a fixed random 10 x d matrix,
labels from a smooth function of Z (sign of z_1 + sin(3 z_2) / 2), so that the
class boundary is a curved surface of the 10-dimensional manifold.  ``moons``: the
papers' two moons.  Both are generated in float32 (the data of a 1M x 784 set
would not fit in float64).
"""

from __future__ import annotations

import numpy as np


def make_manifold(n: int, d: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """X (n, d) float32 and labels y in {0, 1} (all of them)."""
    rng = np.random.default_rng(seed)
    W = np.random.default_rng(12345).normal(size=(10, d)).astype(np.float32) / np.sqrt(
        10
    )
    X = np.empty((n, d), dtype=np.float32)
    y = np.empty(n, dtype=np.int64)
    step = 50_000
    for s in range(0, n, step):
        Z = rng.normal(size=(min(step, n - s), 10)).astype(np.float32)
        np.tanh(Z @ W, out=X[s : s + Z.shape[0]])
        g = Z[:, 0] + 0.5 * np.sin(3.0 * Z[:, 1])
        y[s : s + Z.shape[0]] = (g > 0).astype(np.int64)
    return X, y


def make_moons(n: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two moons (noise 0.1, angles uniform), float32."""
    rng = np.random.default_rng(seed)
    n0 = n // 2
    t = rng.uniform(0, np.pi, n)
    X = np.where(
        (np.arange(n) < n0)[:, None],
        np.c_[np.cos(t), np.sin(t)],
        np.c_[1.0 - np.cos(t), 0.5 - np.sin(t)],
    ) + rng.normal(scale=0.1, size=(n, 2))
    y = (np.arange(n) >= n0).astype(np.int64)
    perm = rng.permutation(n)
    return X[perm].astype(np.float32), y[perm]


def label_subset(y: np.ndarray, n_per_class: int, *, seed: int = 0) -> np.ndarray:
    """Copy of y with all but ``n_per_class`` labels per class set to -1."""
    rng = np.random.default_rng(seed + 1)
    out = np.full_like(y, -1)
    for c in np.unique(y):
        idx = rng.choice(np.flatnonzero(y == c), size=n_per_class, replace=False)
        out[idx] = c
    return out
