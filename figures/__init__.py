"""Paper figures and tables: one package per paper, one module per figure or table.

The generic code (the registry, the cache, plotting, the looseness figure) is at this level;
a paper's package holds only what is its own (the paper's values, sizes and styles).
"""

if __name__ == "figures":  # the bare name (the repository root on the path): no second copy
    import importlib
    import sys

    sys.modules[__name__] = importlib.import_module("calcheck.figures")
