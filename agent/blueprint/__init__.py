"""The abstraction-based blueprint agent (seed 001: Brown, Ganzfried & Sandholm's 2014 ACPC champion):
a betting tree, card abstractions, and external-sampling Monte Carlo CFR over them."""
