"""klm19 Figure 4(a): plug-in vs debiased squared-CE estimators on CIFAR-10, B = 10."""

from __future__ import annotations

from ._fig4 import panel

ID = "klm19.fig4a"
CAPTION, compute, findings, draw = panel(10, "a")
