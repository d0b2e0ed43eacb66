"""Paper figures and tables (one module per figure); filled in by later issues."""
