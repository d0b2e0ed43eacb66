"""The papers' printed claims that fail, each with the valid form the suite checks beside it."""

from __future__ import annotations

__all__ = ["VALID_FORMS"]

#: A printed claim that fails (guarantee id) -> the valid form the suite checks beside it.
VALID_FORMS = {
    "gpr20.cor3": "gpr20.cor3.max_halfwidth",
    "gpr20.g4": "gpr20.g4.corrected",
}
