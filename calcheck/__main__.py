"""``python -m calcheck`` is the ``calcheck`` command."""

import sys

from calcheck.theory_checks.cli import main

sys.exit(main())
