"""The ``deepstack`` command (``main``) and its larger subcommands: ``eval``, ``solve``/``bench solver``
and the ``bench`` modules. ``python -m agent.cli`` runs it too. ``spots.yaml``: the default spots of
``solve`` and ``bench solver``."""
