"""``python -m loopmodel.cli``: same as the ``loopmodel`` command."""

import sys

from . import main

sys.exit(main())
