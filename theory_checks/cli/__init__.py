"""The command line ``calcheck`` (also ``python -m calcheck``)."""
