"""The solver core: hand spaces, public trees, the lookahead tensor layout, vectorized CFR, terminal values,
solving a spot from ranges or re-solving through the CFR-D gadget (``resolve``), many spots at once
(``batched``, ``forest``), range notation and spot files. Imports nothing of ``agent`` above it but
``common``."""
