"""`python -m crawler`: the `crawl` command."""

import sys

from crawler.cli import main

sys.exit(main())
