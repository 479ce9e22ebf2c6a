"""`python -m drill` = the `drill` command."""

import sys

from drill.cli import main

sys.exit(main())
