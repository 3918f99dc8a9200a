"""Task pool of the continual-learning model: ground truths and feature signals.

The paper draws N ground-truth models ``w_n`` in R^d and, for each, a feature
signal ``v_n`` that appears in the task's feature matrix (Definition 1).
Appendix A.2 says the signals are the ground truths "scaled by a constant"
without stating the constant, so ``signal_scale`` is a free parameter here
(default 1.0, i.e. ``V = W``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["TaskPool", "make_clustered_pool", "make_pool"]


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float64, copy=True)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class TaskPool:
    """N task ground truths ``W`` (N, d) and feature signals ``V`` (N, d).

    Arrays are copied to read-only float64 so a pool cannot be mutated
    behind the back of a simulation that shares it.
    """

    W: np.ndarray
    V: np.ndarray

    def __post_init__(self) -> None:
        W = _readonly(self.W)
        V = _readonly(self.V)
        if W.ndim != 2 or W.shape[0] < 1 or W.shape[1] < 1:
            raise ValueError(f"W must have shape (N, d) with N >= 1, d >= 1, got {W.shape}")
        if V.shape != W.shape:
            raise ValueError(f"V must have the same shape as W {W.shape}, got {V.shape}")
        object.__setattr__(self, "W", W)
        object.__setattr__(self, "V", V)

    @property
    def N(self) -> int:
        return int(self.W.shape[0])

    @property
    def d(self) -> int:
        return int(self.W.shape[1])

    @property
    def S(self) -> float:
        """(1/N) sum_n ||w_n||^2: mean squared norm of the ground truths."""
        return float(np.einsum("nd,nd->", self.W, self.W) / self.N)

    @property
    def D(self) -> float:
        """(1/N^2) sum_{n != n'} ||w_{n'} - w_n||^2: mean pairwise task gap.

        Uses the identity sum_{n,n'} ||w_n - w_n'||^2 = 2N sum_n ||w_n - wbar||^2
        (diagonal terms are zero, so n != n' changes nothing).  Centring first
        avoids the cancellation of the uncentred form 2N sum||w||^2 - 2||sum w||^2.
        """
        centred = self.W - self.W.mean(axis=0)
        return float(2.0 * np.einsum("nd,nd->", centred, centred) / self.N)


def make_pool(
    rng: np.random.Generator,
    *,
    N: int,
    d: int,
    sigma0: float,
    sigma0_is: str = "std",
    signal_scale: float = 1.0,
) -> TaskPool:
    """Draw ``w_n ~ N(0, sigma0^2 I_d)`` i.i.d. and set ``V = signal_scale * W``.

    ``sigma0_is="variance"`` reads sigma0 as the variance instead, i.e.
    ``w_n ~ N(0, sigma0 I_d)`` (standard deviation ``sqrt(sigma0)``); the paper's
    notation admits both readings.  One ``standard_normal((N, d))`` block is
    drawn from ``rng``, so both readings consume the stream identically.
    """
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 1:
        raise ValueError(f"N must be an integer >= 1, got {N!r}")
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d must be an integer >= 1, got {d!r}")
    sigma0 = float(sigma0)
    if not (math.isfinite(sigma0) and sigma0 > 0):
        raise ValueError(f"sigma0 must be finite and > 0, got {sigma0!r}")
    if sigma0_is not in ("std", "variance"):
        raise ValueError(f"sigma0_is must be 'std' or 'variance', got {sigma0_is!r}")
    signal_scale = float(signal_scale)
    # A zero signal would make the Definition-1 feature matrix rank deficient.
    if not (math.isfinite(signal_scale) and signal_scale > 0):
        raise ValueError(f"signal_scale must be finite and > 0, got {signal_scale!r}")

    std = sigma0 if sigma0_is == "std" else math.sqrt(sigma0)
    W = std * rng.standard_normal((int(N), int(d)))
    return TaskPool(W=W, V=signal_scale * W)


def make_clustered_pool(
    rng: np.random.Generator,
    *,
    N: int,
    K: int,
    d: int,
    sigma0: float,
    sigma0_is: str = "std",
    signal_scale: float = 1.0,
    intra_exponent: float = 1.5,
) -> TaskPool:
    """K clusters of similar tasks (Section 5.2): ``w_n = c_k(n) + sigma0^intra_exponent xi_n``.

    Centres ``c_k ~ N(0, std^2 I_d)`` (std from ``sigma0_is`` as in
    :func:`make_pool`), ``xi_n ~ N(0, I_d)``, so within a cluster
    ``||w_n - w_n'||_inf = O(sigma0^1.5)`` as Section 5.2 assumes, and across
    clusters O(sigma0).  Task n (0-based) is in cluster ``n mod K``, which
    reproduces Appendix A.4's W1 = {1, 4}, W2 = {2, 5}, W3 = {3, 6}.  Draws one
    ``(K, d)`` block, then one ``(N, d)`` block.
    """
    if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or not 1 <= K <= N:
        raise ValueError(f"K must be an integer in [1, N = {N}], got {K!r}")
    centres = make_pool(rng, N=int(K), d=d, sigma0=sigma0, sigma0_is=sigma0_is).W
    sigma0 = float(sigma0)
    xi = rng.standard_normal((int(N), int(d)))
    W = centres[np.arange(int(N)) % int(K)] + sigma0**intra_exponent * xi
    return TaskPool(W=W, V=float(signal_scale) * W)
