import sys

from gpudesk.cli import main

sys.exit(main())
