"""What a paper plugin needs: the public, stable names for bringing a paper to calcheck.

A package adds a paper through the ``calcheck.papers`` entry-point group (the entry point's
name is the paper key, its target a module). The module defines

``GUARANTEES``
    the paper's bounds: :class:`Guarantee` records of paper ``<key>`` with ids
    ``"<key>.<label>"``, and/or :func:`calcheck.define_guarantee` results with such ids
    (a bound on a method calcheck simulates; the loader gives each a check and a study);
``checks(budget)``
    the paper's :class:`Check` list at a budget name (:func:`get_budget`); optional when
    every guarantee is a :func:`~calcheck.define_guarantee` result;

and optionally ``STUDIES`` (guarantee id -> :class:`StudyAdapter`), ``REFUSED``
(guarantee id -> why it cannot be checked on a user's law), ``METHODS``, ``FIGURES``
(figure id -> module path, each module a :class:`FigureModule`), and, for the
:func:`~calcheck.define_guarantee` results, ``CHECK_ON`` (``{"laws": [...], "grid":
{...}}``: where their generated checks run) and ``SHARPER_CONTROLS`` (guarantee id ->
factor of a sharper negative control).

This module gathers the names such a module uses, apart from what the top level already
exports (:data:`calcheck.LAWS`, :func:`calcheck.define_guarantee`): they are for paper
authors, not for checking a bound, so they stay out of ``calcheck``'s top level.

Records and checks
    :class:`Guarantee` (a bound with its paper, label, statement, hypotheses and
    quantifier), :class:`Check` (a guarantee x experiments x event x bound rule x alphas;
    ``role`` is ``"guarantee"``, ``"control"``, ``"counterexample"``, ``"hypothesis"`` or
    ``"identity"``, by default ``"guarantee"`` when it expects ``"consistent"`` and
    ``"control"`` when it expects ``"violated"``),
    :func:`~calcheck.theory_checks.checks.check.with_sharper_controls` (the stated bound times a
    factor, on the same simulations), :class:`StudyAdapter` (how a guarantee is checked on
    a user's law: ``calcheck run --study``, :func:`calcheck.verify`).
Experiments
    :class:`BinningExperiment` (a binning calibrator fitted on n draws of a binary law, B
    bins, exact per-bin errors: statistics ``max_error``, ``test_point_error``, ...).
Events and bound rules
    :class:`Within` (``stat <= radius``), :class:`AtLeast` and :class:`Exceeds` (a
    statistic that must reach a lower bound), :class:`MeanAtMost` (``E[stat] <= bound``,
    claim ``"1-bound"``); :func:`substitute` (the bound with a symbol replaced: a wrong
    ``n``), :func:`scaled` (the bound times a factor), :func:`constant` (a fixed radius) and
    :func:`other_guarantee` (another guarantee's bound). A check's ``claim`` is
    ``"1-alpha"`` (default), ``"1-alpha/2"``, ``"1-alpha/3"``, ``"1-2alpha/3"``,
    ``"1-2alpha"``, ``"alpha"``, ``"one"`` or ``"1-bound"``.
Budgets
    :func:`get_budget` (``"quick"``: 4000 replicates per cell, alphas 0.1 and 0.05;
    ``"full"``: 10000, alphas 0.2, 0.1, 0.05, 0.01) and :class:`Budget`.
Figures
    :class:`FigureModule`: what a figure module defines.

Examples
--------
A guarantee record and its check on two laws, with a negative control that evaluates the
bound at ``n B`` points and a sharper control (the bound times 0.7):

>>> import numpy as np
>>> from calcheck import LAWS
>>> from calcheck.plugin import (
...     BinningExperiment, Check, Guarantee, Within, get_budget, substitute,
...     with_sharper_controls)
>>> def radius(n, n_bins, alpha):
...     return np.sqrt(np.log(2 * n_bins / alpha) / (2 * (np.floor(n / n_bins) - 1)))
>>> g = Guarantee("ex99.thm1", radius, "ex99", "Theorem 1", "every bin within eps",
...               ("n >= 2B",), "conditional")
>>> g.parameters
('n', 'n_bins', 'alpha')
>>> umd = {"name": "umd", "tie_breaking": "lexicographic"}
>>> cells = tuple(BinningExperiment(umd, LAWS[name], 1000, 10)
...               for name in ("uniform_half", "skewed_beta"))
>>> wrong_n = substitute("n_times_B", "n B points", n=lambda s: s["n"] * s["n_bins"])
>>> def checks(budget="quick"):
...     alphas = get_budget(budget).alphas
...     out = [Check(g.id, g.id, cells, Within("max_error"), alphas),
...            Check(f"{g.id}.control.wrong_n", g.id, cells[:1], Within("max_error"),
...                  alphas, expect="violated", bound=wrong_n)]
...     return with_sharper_controls(out, {g.id: 0.7})

(``Check`` needs ``g`` registered: the plugin loader registers a paper's ``GUARANTEES``
before it calls ``checks``.)
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from calcheck.bounds.guarantee import Guarantee
from calcheck.simulations.experiments.binning import BinningExperiment
from calcheck.theory_checks.checks.budgets import Budget, get_budget
from calcheck.theory_checks.checks.check import Check, StudyAdapter, with_sharper_controls
from calcheck.theory_checks.checks.events import (
    AtLeast,
    Exceeds,
    MeanAtMost,
    Within,
    constant,
    other_guarantee,
    scaled,
    substitute,
)

__all__ = [
    "AtLeast",
    "BinningExperiment",
    "Budget",
    "Check",
    "Exceeds",
    "FigureModule",
    "Guarantee",
    "MeanAtMost",
    "StudyAdapter",
    "Within",
    "constant",
    "get_budget",
    "other_guarantee",
    "scaled",
    "substitute",
    "with_sharper_controls",
]


@runtime_checkable
class FigureModule(Protocol):
    """What a figure module of a paper defines (``FIGURES`` maps a figure id to its path).

    ``calcheck figures <id>`` calls ``compute`` (its result is cached), then ``draw`` and
    saves the figure; ``isinstance(module, FigureModule)`` checks the required names.
    Optional: ``findings(data)`` (a list of one-line statements about the data, shown in
    the report) and ``cache_tasks(cache_dir, reps=, seed=, data_root=)`` (the expensive,
    independent cache entries of ``compute`` as ``(key, fill)`` pairs, which ``calcheck
    figures --jobs`` fills in parallel).

    Attributes
    ----------
    CAPTION : str
        One sentence: what the figure shows.
    """

    CAPTION: str

    def compute(self, cache_dir=None, **options):
        """The figure's data (``cache_dir``, ``reps=``, ``seed=``, ``data_root=``)."""

    def draw(self, data):
        """A matplotlib Figure drawn from ``compute``'s data."""
