#include "native.h"

/* Bumped whenever a declaration in native.h changes meaning; the Python side checks it. */
int ds_native_abi_version(void) { return 1; }
