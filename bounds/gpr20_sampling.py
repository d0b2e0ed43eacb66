r"""Theorem 2 of Gupta, Podkopaev & Ramdas (2020): the sampling step of its proof.

The proof of Theorem 2 (App. B.2) compares the adversary ``Q`` -- ``n + 1`` draws *with*
replacement from ``m`` support points -- with ``R``, draws *without* replacement. If ``T``
is the event that no support point is drawn twice, ``tau_m = P(T)`` and ``R(E) = Q(E | T)``
for every event E, so

.. math:: R^{n+1}(E) \in \bigl[\tau_m^{-1}(Q^{n+1}(E) - (1 - \tau_m)),\
          \tau_m^{-1} Q^{n+1}(E)\bigr] \qquad (31)

The identity (29)-(30) itself -- under Q with distinct scores, CI coverage and PS coverage
are the same event -- has no formula; calcheck checks it exactly by enumeration
(``tests/papers/test_gpr20_thm2.py``).

References
----------
Gupta, C., Podkopaev, A. and Ramdas, A. (2020). Distribution-free binary classification:
prediction sets, confidence intervals and calibration. NeurIPS. Theorem 2 (App. B.2,
eqs. 26-32).
"""

from __future__ import annotations

import numpy as np

from ._validation import as_integer_array, as_unit, guard_public, scalar_or_array

__all__ = ["thm2_no_repeat_probability", "thm2_sampling_interval"]


def _n_support(n, support):
    n_arr = as_integer_array(n, "n", minimum=0)
    m = as_integer_array(support, "support", minimum=1)
    if np.any(n_arr > 10**7):
        raise ValueError(f"n must be at most 1e7 (a product of n + 1 terms), got {n!r}")
    if np.any(m < n_arr + 1):
        raise ValueError(f"support must be >= n + 1 (m >= n + 1 in eq. 31), got {support!r}")
    return n_arr, m


def thm2_no_repeat_probability(n, support):
    r"""``tau_m``: probability that n + 1 draws with replacement from m points are distinct.

    .. math:: \tau_m = \prod_{i=0}^{n} \left(1 - \frac{i}{m}\right) \to 1 \ (m \to \infty)

    Parameters
    ----------
    n : int or array_like of int
        Calibration points, at most 1e7 (the test point is the (n + 1)-th draw).
    support : int or array_like of int
        Number m >= n + 1 of support points of Q.

    Returns
    -------
    tau : float or ndarray

    Notes
    -----
    Paper: gpr20, proof of Theorem 2 (App. B.2), the event T "no index is repeated when
    sampling from Q^{n+1}" before eq. (31); the product is not written in the paper (it is
    the standard birthday probability, catalog §4.3). Exact, no hypothesis.
    """
    n_arr, m = _n_support(n, support)
    n_b, m_b = np.broadcast_arrays(n_arr, m)
    log_tau = np.empty(n_b.shape)
    for idx in np.ndindex(n_b.shape):
        # the product term by term (a log-gamma difference loses the digits at large m)
        log_tau[idx] = np.sum(np.log1p(-np.arange(int(n_b[idx]) + 1) / float(m_b[idx])))
    return scalar_or_array(np.exp(log_tau))


def thm2_sampling_interval(q_prob, n, support):
    r"""Eq. (31): where ``R^{n+1}(E)`` lies given ``Q^{n+1}(E)`` (without vs with replacement).

    .. math:: \bigl[\tau_m^{-1}(Q^{n+1}(E) - (1 - \tau_m)),\ \tau_m^{-1} Q^{n+1}(E)\bigr]

    Parameters
    ----------
    q_prob : float or array_like
        ``Q^{n+1}(E)`` in [0, 1], for any event E of the n + 1 draws.
    n, support
        As in :func:`thm2_no_repeat_probability`.

    Returns
    -------
    (low, high) : tuple of float or ndarray
        The interval of eq. (31); raw values (``high`` may exceed 1, ``low`` be negative).

    Notes
    -----
    Paper: gpr20, proof of Theorem 2, eq. (31), from ``Q(E) = R(E) tau + Q(E | T^c)(1 - tau)``
    with ``Q(E | T) = R(E)``. Exact (no probability), for every event E and every support T.
    With E the PS event and ``Q(E) >= 1 - alpha`` (the CI guarantee under Q, by (29)) it
    gives eq. (32), ``P^{n+1}(Y in C_n) >= tau^{-1}(1 - alpha - (1 - tau))``, whose limit
    m -> infinity is Theorem 2.
    """
    q = as_unit(q_prob, "q_prob")
    tau = np.asarray(thm2_no_repeat_probability(n, support), dtype=float)
    return scalar_or_array((q - (1.0 - tau)) / tau), scalar_or_array(q / tau)


guard_public(globals())  # broadcasting errors name the arguments

#: No registered guarantee: the identity of Theorem 2 is checked by an exact unit test.
GUARANTEES = ()
