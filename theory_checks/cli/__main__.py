"""``python -m calcheck.theory_checks`` is ``calcheck`` (so is ``python -m calcheck``)."""

import sys

from .main import main

sys.exit(main())
