"""``python -m rne_control.ros.demo``: the same as ``rne_demo``."""
import sys

from .cli import main

sys.exit(main())
