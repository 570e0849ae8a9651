"""Depth-limit leaves: what a lookahead is worth where it stops. Check-down values (``checkdown``,
``equity_matrix``), hold'em leaves from check-down matrices or bucketed networks (``holdem``), hand-level
networks (``handnet``, Leduc) and the leaf snapshot a re-solve hands to them (``snapshot``)."""
