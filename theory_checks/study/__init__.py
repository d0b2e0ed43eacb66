"""Study files: guarantees checked on laws of their own, without Python."""
