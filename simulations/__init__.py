"""Laws with exact ground truth, calibrators under test, metrics and the Monte Carlo engine."""
