"""The single expert's minimum-norm interpolating update (paper eq. 5)."""

from __future__ import annotations

import numpy as np

__all__ = ["complement_update", "min_norm_update"]


def min_norm_update(w_prev: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """One continual-learning step, eq. 5 of the paper:

        w_t = w_{t-1} + X_t (X_t^T X_t)^{-1} (y_t - X_t^T w_{t-1}).

    This is the point closest to ``w_{t-1}`` among all ``w`` with
    ``X_t^T w = y_t`` (the limit of gradient descent started at ``w_{t-1}``
    on the over-parameterised least-squares loss).

    Batched over any leading axes: ``w_prev`` (..., d), ``X`` (..., d, s),
    ``y`` (..., s); leading axes broadcast.  Returns (..., d).

    With full column rank s (s <= d) ``X^T X`` is invertible and the system
    is solved with ``numpy.linalg.solve`` rather than forming an inverse.  A
    batch holding a rank-deficient ``X`` (e.g. Definition 1 with sigma_t = 0,
    whose noise columns vanish) takes the same minimum-norm step through the
    pseudo-inverse, ``w + X (X^T X)^+ (y - X^T w) = w + (X^T)^+ (y - X^T w)``,
    which is still the point closest to ``w_{t-1}`` with ``X^T w = y`` when
    the system is consistent (it is: y = X^T w_n).
    """
    w_prev = np.asarray(w_prev, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    # A contiguous X^T makes the small batched matmuls markedly faster.
    Xt = np.ascontiguousarray(np.swapaxes(X, -1, -2))
    gram = Xt @ X
    residual = y - (Xt @ w_prev[..., None])[..., 0]
    try:
        coeffs = np.linalg.solve(gram, residual[..., None])
    except np.linalg.LinAlgError:
        coeffs = np.linalg.pinv(gram, hermitian=True) @ residual[..., None]
    return w_prev + (X @ coeffs)[..., 0]


def complement_update(w_prev: np.ndarray, C: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Eq. 5 written with a basis C (..., d, d - s) of the orthogonal complement of span(X_t).

    Eq. 5 moves ``w_{t-1}`` to the nearest point of {w : X_t^T w = X_t^T w_n}, i.e. ``w_n + P (w_{t-1} -
    w_n)`` with P the orthogonal projection onto span(X_t)^perp = span(C):

        w_t = w_n + C (C^T C)^{-1} C^T (w_{t-1} - w_n).

    Requires C of full column rank (almost sure for Gaussian C).  Batched like :func:`min_norm_update`."""
    w_prev = np.asarray(w_prev, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.float64)
    Ct = np.ascontiguousarray(np.swapaxes(C, -1, -2))
    offset = w_prev - truth
    coeffs = np.linalg.solve(Ct @ C, (Ct @ offset[..., None]))
    return truth + (C @ coeffs)[..., 0]
