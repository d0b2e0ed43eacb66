"""Calibration metrics (the E of ADEMP): exact ones from a known law, plug-in estimates.

:mod:`.exact` -- exact per-bin errors of fitted binning maps; :mod:`.plugin` -- binary
plug-in estimators on a test sample; :mod:`.multiclass` -- top-label, confidence and
class-wise plug-in errors.
"""

from .exact import (
    BinErrors,
    conditional_max_error,
    exact_bin_errors,
    lp_ece,
    marginal_validity,
    merge_equal_outputs,
    validity_curve,
)
from .multiclass import (
    PluginErrors,
    plugin_classwise_ece,
    plugin_reliability_mce,
    plugin_top_label_errors,
    top_label_reliability,
)
from .plugin import (
    fixed_width_reliability,
    plugin_conditional_validity,
    plugin_ece_fixed_width,
    plugin_validity,
)

__all__ = [
    "BinErrors",
    "PluginErrors",
    "conditional_max_error",
    "exact_bin_errors",
    "fixed_width_reliability",
    "lp_ece",
    "marginal_validity",
    "merge_equal_outputs",
    "plugin_classwise_ece",
    "plugin_conditional_validity",
    "plugin_ece_fixed_width",
    "plugin_reliability_mce",
    "plugin_top_label_errors",
    "plugin_validity",
    "top_label_reliability",
    "validity_curve",
]
