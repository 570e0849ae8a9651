"""The DeepStack agent, in layers; a package imports only the packages below it (the import-linter
contracts in pyproject.toml; docs/layers.md lists what each imports):

* ``cli``: the ``deepstack`` command and its subcommands, benchmarks
* ``evaluation``: matches, exploitability, LBR, AIVAT, confidence intervals, plots;
  ``training``: generating solved situations and training value networks (side by side)
* ``bots``: the DeepStack bot, baselines, the registry, config, time management
* ``resolving``: continual re-solving between decisions; ``blueprint``: the abstraction-based
  blueprint (MCCFR), beside it
* ``leaves``: depth-limit leaf values (check-down, value networks)
* ``nets``: value networks, card abstraction, encoding, the model manifest
* ``solver``: hand spaces, trees, the lookahead, CFR, solving a spot or re-solving
* ``common``: files written whole or not at all, strict YAML, worker pools
"""
