"""Continual re-solving (DeepStack section 2): what the bot carries between decisions (``continual``)
and the opponent's values at a new street's start by solving that street (``chance_solve``)."""
