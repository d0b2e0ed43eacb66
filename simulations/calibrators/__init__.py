"""Calibrators under test (the M of ADEMP), scikit-learn style, with vectorised cores.

Binary binning (:mod:`.binning`), scaling (:mod:`.scaling`), importance-weighted binning
and uLSIF (:mod:`.weighted`), multiclass binning and scaling (:mod:`.multiclass_binning`,
:mod:`.multiclass_scaling`), canonical projection binning (:mod:`.projection_binning`) and
the M2B wrappers (:mod:`.m2b`). Bin edges and membership live in :mod:`.edges` only.
"""

from .binning import (
    CALIBRATORS,
    BinningBatch,
    DoubleDippedScalingBinning,
    FixedWidthBinning,
    RandomizedUniformMassBinning,
    UniformMassBinning,
    UniformMassSampleSplitting,
    ZadroznyElkanBinning,
    calibrator_from_spec,
)
from .isotonic import IsotonicBinning
from .m2b import M2BCalibrator, TopKConfidenceCalibrator, TopKLabelCalibrator
from .multiclass_binning import (
    ClassWiseHistogramBinning,
    NormalizedHistogramBinning,
    TopLabelHistogramBinning,
    check_probability_matrix,
    softmax,
    top_label,
)
from .multiclass_scaling import DirichletScaling, MulticlassTemperatureScaling, VectorScaling
from .projection_binning import ProjectionHistogramBinning
from .scaling import SCALERS, BetaCalibration, PlattScaling, TemperatureScaling
from .weighted import ULSIF, WeightedHistogramBinning

__all__ = [
    "CALIBRATORS",
    "SCALERS",
    "ULSIF",
    "BetaCalibration",
    "BinningBatch",
    "ClassWiseHistogramBinning",
    "DirichletScaling",
    "DoubleDippedScalingBinning",
    "FixedWidthBinning",
    "IsotonicBinning",
    "M2BCalibrator",
    "MulticlassTemperatureScaling",
    "NormalizedHistogramBinning",
    "PlattScaling",
    "ProjectionHistogramBinning",
    "RandomizedUniformMassBinning",
    "TemperatureScaling",
    "TopKConfidenceCalibrator",
    "TopKLabelCalibrator",
    "TopLabelHistogramBinning",
    "UniformMassBinning",
    "UniformMassSampleSplitting",
    "VectorScaling",
    "WeightedHistogramBinning",
    "ZadroznyElkanBinning",
    "calibrator_from_spec",
    "check_probability_matrix",
    "softmax",
    "top_label",
]
