"""``python -m calcheck`` is the ``calcheck`` command."""

import sys

from calcheck._entry import main

sys.exit(main())
