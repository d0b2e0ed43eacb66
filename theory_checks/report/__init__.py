"""A run's report: the results file, the HTML page, its pictures, the summary and the audit."""
