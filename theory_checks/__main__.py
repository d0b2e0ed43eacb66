"""``python -m theory_checks`` is ``calcheck``."""

import sys

from .cli import main

sys.exit(main())
