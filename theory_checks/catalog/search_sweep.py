"""The law search's paper tables: the quick sweep and the power table.

``calcheck search --all`` and ``calcheck search --power``: which guarantee is searched on
which law family, grid, alpha and criterion, which studiable guarantees the sweep leaves out
and why, and which stated forms are known to be false (where a violation found is the
expected evidence).
"""

from __future__ import annotations

from calcheck.simulations.search import SearchBudget

__all__ = ["CW_BUDGET", "KNOWN_FALSE", "NOT_SEARCHED", "POWER_ROWS", "SWEEP"]

#: The quick-budget sweep: (target, family, family options, grid, alpha, criterion[,
#: budget]). The stated guarantees search for their tightest law; the wrong-bound controls
#: for a violating one. Studiable guarantees not listed are reported by :func:`sweep` as not
#: searchable, with the reason; those ``for_law`` does not adapt (klm19's rate claims,
#: nch14's asymptotic ones) are not studiable at all.
_BIN = {"n": 1000, "n_bins": 10}
#: CW-HB laws draw their Dirichlet scores by inversion (common random numbers), about 1 s
#: per candidate at n = 1000 and 200 replicates: a smaller budget, stated in the table.
CW_BUDGET = SearchBudget("quick_cw", 8, 4, 100, 1000)
_TL = {"n": 2000, "points_per_bin": 50}
SWEEP = (
    *(
        (g, "beta_piecewise", {"k": 5}, _BIN, 0.1, "mean_ratio")
        for g in (
            "gr21.thm3",
            "gr21.cor1",
            "gr21.thm4.conditional",
            "gr21.thm4.marginal",
            "gr21.thm4.ece_hp",
            "gr21.thm4.ece_mean",
            "gr21.thm4.ece_mean.proof_valid",
        )
    ),
    ("gpr20.cor3", "atoms", {"k": 2}, {"n": 1000, "n_bins": 2}, 0.1, "failure"),
    ("gpr20.cor3.max_halfwidth", "atoms", {"k": 2}, {"n": 1000, "n_bins": 2}, 0.1, "failure"),
    (
        "gpr20.thm5",
        "beta_piecewise",
        {"k": 5},
        {"n1": 1000, "n2": 1000, "n_bins": 10},
        0.1,
        "mean_ratio",
    ),
    *(
        (g, "top_label", {"n_classes": 3}, _TL, 0.1, "mean_ratio")
        for g in (
            "gr22.thm1.conditional",
            "gr22.thm1.conditional.data_dependent",
            "gr22.thm1.marginal",
            "gr22.thm1.ece_hp",
            "gr22.thm1.ece_mean",
        )
    ),
    *(
        (g, "beta_piecewise", {"k": 5}, _BIN, 0.1, "mean_ratio")
        for g in (
            "nch14.thm31",
            "nch14.thm31.hoeffding",
            "nch14.eq9",
            "nch14.thm33",
            "nch14.thm33.hoeffding",
            "nch14.thm33.variance",
        )
    ),
    *(
        (g, "linear_shift", {}, _BIN, 0.1, "mean_ratio")
        for g in ("gpr20.thm7", "gpr20.thm7.explicit", "gpr20.thm10")
    ),
    ("gpr20.prop3", "linear_shift", {}, {"n_bins": 10}, 0.1, "failure"),
    *(
        (
            g,
            "dirichlet_affine",
            {"n_classes": 3},
            {"n": 1000, "points_per_bin": 50},
            0.1,
            "mean_ratio",
            CW_BUDGET,
        )
        for g in (
            "gr22.thm2.conditional",
            "gr22.thm2.marginal",
            "gr22.thm2.ece_hp",
            "gr22.thm2.ece_mean",
        )
    ),
    (
        "gr21.thm3.times_0.8",
        "beta_piecewise",
        {"k": 2},
        {"n": 1000, "n_bins": 20},
        0.01,
        "mean_ratio",
    ),
)
#: Studiable guarantees the sweep leaves out, and why.
NOT_SEARCHED = {
    "gr22.accuracy": "an identity (TL-HB predicts the base model's argmax by construction of "
    "the map): no bound to search against",
}
#: Stated forms known to be false, with where the suite documents it: a violation found
#: there is the expected evidence, not a regression.
KNOWN_FALSE = {
    "gpr20.cor3": "the printed eps at b* = argmin N_b is not the largest half-width when the "
    "empirical variances differ (gpr20 App. C.2); gpr20.cor3.max_halfwidth is the valid form",
}

#: The grid of the power table's binary rows.
_PGRID = {"n": 1000, "n_bins": 20}
#: (target, family, family options, grid, alpha, criterion): the rows of the search's power
#: table (``calcheck search --power``, :func:`calcheck.theory_checks.search.power.search_power`).
POWER_ROWS = (
    ("gr21.thm3.times_0.8", "beta_piecewise", {"k": 5}, _PGRID, 0.01, "mean_ratio"),
    ("gr21.thm3.times_0.9", "beta_piecewise", {"k": 5}, _PGRID, 0.01, "mean_ratio"),
    (
        "gr21.thm4.conditional.times_0.8",
        "beta_piecewise",
        {"k": 5},
        _PGRID,
        0.01,
        "mean_ratio",
    ),
    ("gr21.thm4.marginal.times_0.7", "beta_piecewise", {"k": 5}, _PGRID, 0.01, "mean_ratio"),
    ("gr21.cor1.times_0.7", "beta_piecewise", {"k": 5}, _PGRID, 0.01, "mean_ratio"),
    (
        "nch14.thm31.hoeffding.times_0.8",
        "beta_piecewise",
        {"k": 5},
        _PGRID,
        0.01,
        "mean_ratio",
    ),
    ("nch14.eq9.times_0.7", "beta_piecewise", {"k": 5}, _PGRID, 0.01, "mean_ratio"),
    (
        "gr22.thm1.conditional.times_0.8",
        "top_label",
        {"n_classes": 3},
        {"n": 2000, "points_per_bin": 50},
        0.01,
        "mean_ratio",
    ),
)
