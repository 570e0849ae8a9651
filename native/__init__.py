"""Native kernels (C via cffi) and the card encoding every other layer builds on."""
