import sys

from lakehouse.cli import main

sys.exit(main())
