/* A pool of worker threads for the row-parallel kernels, built so that a busy machine slows a
 * kernel down in proportion to the CPU it gets, never more.
 *
 * The work of a call is cut into chunks (disjoint row ranges); the calling thread and the
 * pool's threads claim chunks one at a time from a shared counter until none are left.  A
 * worker that the scheduler has not run yet simply finds no chunk left: the caller never waits
 * for a thread that has not started, only for chunks a running thread has claimed.  Workers
 * sleep on a condition variable between calls (no spinning that would steal the CPU of the
 * thread doing the work) and are started once, on first use, not per call.
 *
 * The claim counter carries the call's generation in its high half, so a worker that read one
 * call's job and ran late can never claim a chunk of the next call.  One call uses the pool at
 * a time; a second caller meanwhile (another Python thread) runs its chunks itself.  After a
 * fork the child starts with no workers (pthread_atfork).  Which thread runs which chunk never
 * changes a result: chunks write disjoint rows.
 */
#define _POSIX_C_SOURCE 200809L

#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define POOL_MAX 64

typedef struct {
    pthread_mutex_t lock;  /* guards the job, the worker count and the finished count */
    pthread_cond_t wake;   /* workers wait here for a new job */
    pthread_cond_t done;   /* the caller waits here for claimed chunks to finish */
    int workers;           /* threads started */
    uint32_t gen;          /* generation of the current (or last) job */
    int open;              /* a job is being run */
    ds_range_fn fn;
    const void *args;
    const int64_t *bounds;
    int chunks;
    int finished;                /* chunks done (under lock) */
    _Atomic uint64_t ticket;     /* gen << 32 | next chunk to claim */
} Pool;

static Pool pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0,
                    NULL, NULL, NULL, 0, 0, 0};
static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* Claims and runs chunks of generation `gen` until none are left; returns how many it ran. */
static int work(uint32_t gen, ds_range_fn fn, const void *args, const int64_t *bounds, int chunks) {
    int ran = 0;
    for (;;) {
        uint64_t t = atomic_load_explicit(&pool.ticket, memory_order_acquire);
        for (;;) {
            if ((uint32_t)(t >> 32) != gen || (int64_t)(uint32_t)t >= chunks) return ran;
            if (atomic_compare_exchange_weak_explicit(&pool.ticket, &t, t + 1, memory_order_acq_rel,
                                                      memory_order_acquire))
                break;
        }
        const int i = (int)(uint32_t)t;
        fn(args, bounds[i], bounds[i + 1]);
        ran++;
    }
}

static void *worker_main(void *unused) {
    (void)unused;
    uint32_t seen = 0; /* no job seen yet: generations start at 1 */
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        while (!(pool.open && pool.gen != seen)) pthread_cond_wait(&pool.wake, &pool.lock);
        seen = pool.gen;
        const ds_range_fn fn = pool.fn;
        const void *args = pool.args;
        const int64_t *bounds = pool.bounds;
        const int chunks = pool.chunks;
        pthread_mutex_unlock(&pool.lock);
        const int ran = work(seen, fn, args, bounds, chunks);
        pthread_mutex_lock(&pool.lock);
        if (ran) {
            pool.finished += ran;
            if (pool.finished >= chunks) pthread_cond_signal(&pool.done);
        }
    }
    return NULL;
}

static void child_after_fork(void) {
    /* the workers were not copied: start again without them (no job is running in the child) */
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pthread_mutex_init(&busy, NULL);
    pool.workers = 0;
    pool.open = 0;
}

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, child_after_fork); }

/* Starts workers until there are `n` (or as many as could be started); under pool.lock. */
static void grow(int n) {
    if (n > POOL_MAX) n = POOL_MAX;
    while (pool.workers < n) {
        pthread_t tid;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        const int ok = pthread_create(&tid, &attr, worker_main, NULL) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) break;
        pool.workers++;
    }
}

void ds_pool_run(ds_range_fn fn, const void *args, const int64_t *bounds, int chunks, int threads) {
    if (chunks <= 0) return;
    if (threads <= 1 || chunks == 1 || pthread_mutex_trylock(&busy) != 0) {
        for (int i = 0; i < chunks; i++) fn(args, bounds[i], bounds[i + 1]);
        return;
    }
    pthread_once(&fork_once, register_fork_handler);
    pthread_mutex_lock(&pool.lock);
    grow(threads - 1);
    if (++pool.gen == 0) pool.gen = 1; /* 0 means "none seen" to a new worker */
    const uint32_t gen = pool.gen;
    pool.fn = fn;
    pool.args = args;
    pool.bounds = bounds;
    pool.chunks = chunks;
    pool.finished = 0;
    atomic_store_explicit(&pool.ticket, (uint64_t)gen << 32, memory_order_release);
    pool.open = 1;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);

    const int ran = work(gen, fn, args, bounds, chunks);

    pthread_mutex_lock(&pool.lock);
    pool.finished += ran;
    while (pool.finished < chunks) pthread_cond_wait(&pool.done, &pool.lock);
    pool.open = 0;
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&busy);
}

int ds_pool_parts(int threads, int64_t items, int64_t work_per_item) {
    if (threads <= 1 || items < 2) return 1;
    if (threads > POOL_MAX) threads = POOL_MAX;
    const int64_t w = work_per_item > 0 ? work_per_item : 1;
    int64_t by_work = items * w / DS_POOL_MIN_WORK;
    if (by_work > items) by_work = items;
    if (by_work < 1) by_work = 1;
    return by_work < threads ? (int)by_work : threads;
}

int ds_pool_chunks(int parts, int64_t items, int max_chunks) {
    if (parts <= 1 || items < 1) return 1;
    int64_t c = (int64_t)parts * DS_POOL_CHUNKS_PER_THREAD;
    if (c > items) c = items;
    if (c > max_chunks) c = max_chunks;
    return (int)c;
}
