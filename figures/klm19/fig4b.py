"""klm19 Figure 4(b): plug-in vs debiased squared-CE estimators on CIFAR-10, B = 100."""

from __future__ import annotations

from ._fig4 import panel

ID = "klm19.fig4b"
CAPTION, compute, findings, draw = panel(100, "b")
