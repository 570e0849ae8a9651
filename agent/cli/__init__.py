"""The ``deepstack`` command (``main``) and its larger subcommands: ``eval``, ``solve``/``bench solver``
and the ``bench`` modules. ``python -m agent.cli`` runs it too. ``spots.yaml``: the default spots of
``solve`` and ``bench solver``."""

import sys


def run() -> int:
    """The console script: :func:`agent.cli.main.main`, imported here so that a Ctrl-C while the product
    loads (about two seconds, torch most of it) is one line and status 130, not an import traceback."""
    try:
        from agent.cli.main import main
    except KeyboardInterrupt:
        print("deepstack: interrupted", file=sys.stderr)
        return 130
    return main()
