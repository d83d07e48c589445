"""`python -m memconform`: the same command as `memconform`."""

import sys

from memconform.cli import main

sys.exit(main())
