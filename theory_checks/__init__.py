"""Declarative theory checks, verdicts, the calcheck CLI and run reports."""
