"""A user's own guarantees and calibrators, defined at run time."""
