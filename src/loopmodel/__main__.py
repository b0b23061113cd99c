"""``python -m loopmodel``: same as the ``loopmodel`` command."""
import sys

from .cli import main

sys.exit(main())
