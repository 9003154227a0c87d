"""``python -m streamparse``: the command line.

Invariant: nothing here but the hand-off to ``cli.main`` and its exit status.
"""

import sys

from .cli import main

sys.exit(main())
