"""The adversarial law search.

Its driver, criterion, refinement, known hard laws, power, and what a person sees of it.
"""
