"""`python -m memconform`: the same command as `memconform`."""

import sys

from memconform.cli.main import main

sys.exit(main())
