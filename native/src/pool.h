/* The worker pool of the row-parallel kernels (pool.c); internal, not part of the cffi API. */
#ifndef DEEPSTACK_POOL_H
#define DEEPSTACK_POOL_H

#include <stdint.h>

typedef void (*ds_range_fn)(const void *args, int64_t lo, int64_t hi);

/* Runs fn(args, bounds[i], bounds[i + 1]) for every i < chunks, on the calling thread and on up
 * to threads - 1 pool threads, each chunk exactly once; returns when all are done. */
void ds_pool_run(ds_range_fn fn, const void *args, const int64_t *bounds, int chunks, int threads);

#endif
