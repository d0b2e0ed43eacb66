"""Laws with exact ground truth, calibrators under test, metrics and the Monte Carlo engine."""

if __name__ == "simulations":  # the bare name (the repository root on the path): no second copy
    import importlib
    import sys

    sys.modules[__name__] = importlib.import_module("calcheck.simulations")
