"""`python -m drill` = the `drill` command."""

import sys

from drill.cli.main import main

sys.exit(main())
