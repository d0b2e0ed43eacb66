"""Declarative theory checks, verdicts, the calcheck CLI and run reports."""

if __name__ == "theory_checks":  # the bare name (the repository root on the path): no second copy
    import importlib
    import sys

    sys.modules[__name__] = importlib.import_module("calcheck.theory_checks")
