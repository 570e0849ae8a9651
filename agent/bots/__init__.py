"""Bots that play matches: the DeepStack bot (``deepstack``), baselines, the registry by name (``registry``),
the checked ``config.yaml`` (``config``), time per decision (``timing``) and heap trimming (``heap``)."""
