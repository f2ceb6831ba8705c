"""``python -m problems.cli``: the ``cutplane`` command."""

import sys

from problems.cli.main import main

sys.exit(main())
