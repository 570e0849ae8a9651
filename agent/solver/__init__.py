"""The solver core: hand spaces, public trees, the lookahead tensor layout, vectorized CFR, terminal values,
solving a spot from ranges or re-solving through the CFR-D gadget (``resolve``), many spots at once
(``batched``, ``forest``), range notation and spot files, the YAML loader of every file we read
(``yaml_files``: a key given twice is refused), and the process pools that spread solves over the cores
(``workers``). Imports nothing of ``agent`` above it."""
