/* C API of the native kernels, as seen from Python through cffi.
 *
 * Cards are integers 4*rank + suit (rank 0..12 = 2..A, suit 0..3 = c,d,h,s).
 * The block between the CDEF markers is fed to cffi's cdef() verbatim, so it holds
 * plain declarations only (no macros, no includes).
 */
#ifndef DEEPSTACK_NATIVE_H
#define DEEPSTACK_NATIVE_H

#include <stdint.h>

/* CDEF BEGIN */
int ds_native_abi_version(void);
/* CDEF END */

#endif
