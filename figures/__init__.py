"""Paper figures and tables (one module per figure); filled in by later issues."""

if __name__ == "figures":  # the bare name (the repository root on the path): no second copy
    import importlib
    import sys

    sys.modules[__name__] = importlib.import_module("calcheck.figures")
