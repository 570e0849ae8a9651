"""``python -m agent.cli``: the ``deepstack`` command without the installed script."""

import sys

from agent.cli import run

sys.exit(run())
