"""Checks over a series of sizes: rates, exponents, means and trade-offs."""
