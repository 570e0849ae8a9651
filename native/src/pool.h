/* The worker pool of the row-parallel kernels (pool.c); internal, not part of the cffi API. */
#ifndef DEEPSTACK_POOL_H
#define DEEPSTACK_POOL_H

#include <stdint.h>

typedef void (*ds_range_fn)(const void *args, int64_t lo, int64_t hi);

/* Runs fn(args, bounds[i], bounds[i + 1]) for every i < chunks, on the calling thread and on up
 * to threads - 1 pool threads, each chunk exactly once; returns when all are done. */
void ds_pool_run(ds_range_fn fn, const void *args, const int64_t *bounds, int chunks, int threads);

/* Least work (floats written) worth a thread, and chunks per thread: several, so that a thread
 * the machine runs slowly holds up no more than one small chunk while the others take the rest. */
#define DS_POOL_MIN_WORK (1 << 16)
#define DS_POOL_CHUNKS_PER_THREAD 4

/* How many threads `items` items of `work_per_item` floats each are worth (1 .. threads). */
int ds_pool_parts(int threads, int64_t items, int64_t work_per_item);
/* How many chunks for `parts` threads over `items` items (at most max_chunks); 1 for one thread. */
int ds_pool_chunks(int parts, int64_t items, int max_chunks);

#endif
