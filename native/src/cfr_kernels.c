/* Fused CFR kernels (float32) for the CPU path of the vectorized solver (agent/cfr.py).
 *
 * Every per-player tensor is a row-major [rows, H] float32 buffer (row = tree node instance,
 * H = hands); each kernel makes ONE pass over the rows it touches, a row at a time (a row of
 * H <= 1326 floats stays in L1 while it is combined), with the hand loop vectorised by the
 * compiler (-O3; AVX2 clone picked at load time, like terminal.c).
 *
 *   forward   out[j, :]            = parent[parent_local[j], :] * table[src[j], :]
 *             (forward_rows: only for the listed rows j; the solver leaves terminal rows out,
 *             their reach formed by the terminal kernels as they read it)
 *   backward  dst[parent_local[j], :] += child[j, :] * table[src[j], :] (* weight[j]); with
 *             `assign`, a parent's first child writes (=) instead: no zeroing pass needed
 *   regrets   R[m, a, :] += (values[children[m, a], :] - values[rows[m], :]) * valid[m, a],
 *             then R = max(R, 0) (floor) or R *= (R > 0 ? pos : neg) (discount)
 *   strategy  S[m, a, :] = max(R[m, a, :], 0) * valid[m, a] / sum_a(...), or
 *             valid[m, a] / sum_a valid[m, a] where that sum is 0 (0 if no action is valid)
 *   regrets_strategy  both of the above in one pass, skipping actions with valid == 0
 *   average   SS[m, a, :] += w * (S[m, a, :] * reach[rows[m], :])
 *   add_rows  dst[i, :] += w * src[rows[i], :]
 *
 * Arithmetic is done in the same order as the torch phases of agent/cfr.py (the results
 * agree bit for bit, except `average` / `add_rows` where torch may fuse w * x + y).
 *
 * Safety: every index is checked against its table before anything is written, so a bad
 * index never reads or writes out of bounds.  Return codes (int64): -1 = done; >= 0 = the
 * flat position of the first out-of-range index (nothing written; for regrets, positions
 * below M are in rows, M + m * A + a in children); -2 = bad sizes (negative count, H < 1,
 * NULL pointer where data is needed).  Buffers must not overlap (restrict).
 *
 * Threads: `threads` <= 1 runs in the calling thread.  More splits the rows into chunks that
 * the caller and up to threads - 1 workers of pool.c share, when the work is large enough
 * (DS_POOL_MIN_WORK floats per thread, pool.h); results are identical whatever the thread count (no reduction changes order).
 * backward splits only at parent boundaries and only when parent_local is non-decreasing
 * (children of a parent contiguous, parents in order: how agent/lookahead.py lays rows
 * out); otherwise it runs single-threaded, still correct.  If a thread cannot be created,
 * its part runs in the caller.
 */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "native.h"
#include "pool.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(DS_NO_CLONES)
#define CK_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CK_CLONES
#endif

#if defined(__GNUC__)
#define CK_INLINE static inline __attribute__((always_inline))
#else
#define CK_INLINE static inline
#endif

#if defined(__x86_64__) && !defined(CK_NO_STREAM)
#include <xmmintrin.h>
#define CK_STREAM 1
#else
#define CK_STREAM 0
#endif

#if defined(__GNUC__)
#define CK_BARRIER() __asm__ __volatile__("" ::: "memory")
#else
#define CK_BARRIER() ((void)0)
#endif

enum { CK_OK = -1, CK_BAD_ARGS = -2 };

#define MAX_CHUNKS 256
/* Hands per block in the strategy kernels: a whole row of hold'em (1326 hands, rounded up to
 * whole vectors). Whole rows are read and written in order, which the hardware prefetchers
 * follow; blocks of 256 hands hopping between an action's rows measured 20% slower on a
 * turn lookahead (its rows do not fit in any cache). Larger H is done a block at a time. */
#define CHUNK 1328

/* ------------------------------------------------------------------ threads */
typedef void (*range_fn)(const void *args, int64_t lo, int64_t hi);

static void even_bounds(int64_t n, int parts, int64_t *bounds) {
    for (int i = 0; i <= parts; i++) bounds[i] = n * i / parts;
}

static void run_even(range_fn fn, const void *args, int64_t n, int64_t floats_per_item, int threads) {
    int64_t bounds[MAX_CHUNKS + 1];
    const int parts = ds_pool_parts(threads, n, floats_per_item);
    const int chunks = ds_pool_chunks(parts, n, MAX_CHUNKS);
    even_bounds(n, chunks, bounds);
    ds_pool_run(fn, args, bounds, chunks, parts);
}

/* First position i < n with idx[i] outside [0, limit), or -1. */
static int64_t first_bad_index(const int64_t *idx, int64_t n, int64_t limit) {
    for (int64_t i = 0; i < n; i++)
        if ((uint64_t)idx[i] >= (uint64_t)limit) return i;
    return -1;
}

/* ------------------------------------------------------------------ forward */
typedef struct {
    int64_t H;
    const int64_t *rows; /* the child rows to write (NULL: all) */
    const int64_t *parent_local, *src;
    const float *parent, *table;
    float *out;
} ForwardArgs;

CK_CLONES static void forward_range(const void *vargs, int64_t lo, int64_t hi) {
    const ForwardArgs *g = (const ForwardArgs *)vargs;
    const int64_t H = g->H;
    for (int64_t k = lo; k < hi; k++) {
        const int64_t j = g->rows ? g->rows[k] : k;
        const float *restrict p = g->parent + g->parent_local[j] * H;
        const float *restrict t = g->table + g->src[j] * H;
        float *restrict o = g->out + j * H;
        for (int64_t h = 0; h < H; h++) o[h] = p[h] * t[h];
    }
}

int64_t ds_cfr_forward(int64_t n, int64_t H, const int64_t *parent_local, const int64_t *src,
                       const float *parent, int64_t n_parent, const float *table, int64_t n_table,
                       float *out, int threads) {
    if (n < 0 || H < 1 || n_parent < 0 || n_table < 0) return CK_BAD_ARGS;
    if (n == 0) return CK_OK;
    if (!parent_local || !src || !parent || !table || !out) return CK_BAD_ARGS;
    int64_t bad = first_bad_index(parent_local, n, n_parent);
    if (bad >= 0) return bad;
    bad = first_bad_index(src, n, n_table);
    if (bad >= 0) return n + bad;
    const ForwardArgs args = {H, NULL, parent_local, src, parent, table, out};
    run_even(forward_range, &args, n, H, threads);
    return CK_OK;
}

/* forward for the rows listed in `rows` only (the others are not written) */
int64_t ds_cfr_forward_rows(int64_t n, int64_t H, const int64_t *rows, int64_t n_child, const int64_t *parent_local,
                            const int64_t *src, const float *parent, int64_t n_parent, const float *table,
                            int64_t n_table, float *out, int threads) {
    if (n < 0 || H < 1 || n_child < 0 || n_parent < 0 || n_table < 0) return CK_BAD_ARGS;
    if (n == 0) return CK_OK;
    if (!rows || !parent_local || !src || !parent || !table || !out) return CK_BAD_ARGS;
    int64_t bad = first_bad_index(rows, n, n_child);
    if (bad >= 0) return bad;
    for (int64_t k = 0; k < n; k++) {
        if ((uint64_t)parent_local[rows[k]] >= (uint64_t)n_parent) return n + k;
        if ((uint64_t)src[rows[k]] >= (uint64_t)n_table) return 2 * n + k;
    }
    const ForwardArgs args = {H, rows, parent_local, src, parent, table, out};
    run_even(forward_range, &args, n, H, threads);
    return CK_OK;
}

/* ------------------------------------------------------------------ backward */
typedef struct {
    int64_t H;
    const int64_t *parent_local, *src;
    const float *weight, *child, *table;
    float *dst;
    int assign;
} BackwardArgs;

CK_CLONES static void backward_range(const void *vargs, int64_t lo, int64_t hi) {
    const BackwardArgs *g = (const BackwardArgs *)vargs;
    const int64_t H = g->H;
    for (int64_t j = lo; j < hi; j++) {
        float *restrict d = g->dst + g->parent_local[j] * H;
        const float *restrict c = g->child + j * H;
        const float *restrict t = g->table + g->src[j] * H;
        /* assign: a parent's first child writes its row (0 + x == x: the same result as adding
         * into a zeroed row, without the pass that zeroes it) */
        if (g->assign && (j == 0 || g->parent_local[j] != g->parent_local[j - 1])) {
            if (g->weight) {
                const float w = g->weight[j];
                for (int64_t h = 0; h < H; h++) d[h] = (c[h] * t[h]) * w;
            } else {
                for (int64_t h = 0; h < H; h++) d[h] = c[h] * t[h];
            }
        } else if (g->weight) {
            const float w = g->weight[j];
            for (int64_t h = 0; h < H; h++) d[h] += (c[h] * t[h]) * w;
        } else {
            for (int64_t h = 0; h < H; h++) d[h] += c[h] * t[h];
        }
    }
}

int64_t ds_cfr_backward(int64_t n, int64_t H, const int64_t *parent_local, const int64_t *src,
                        const float *weight, const float *child, const float *table, int64_t n_table,
                        float *dst, int64_t n_dst, int assign, int threads) {
    if (n < 0 || H < 1 || n_table < 0 || n_dst < 0) return CK_BAD_ARGS;
    if (n == 0) return CK_OK;
    if (!parent_local || !src || !child || !table || !dst) return CK_BAD_ARGS;
    int64_t bad = first_bad_index(parent_local, n, n_dst);
    if (bad >= 0) return bad;
    bad = first_bad_index(src, n, n_table);
    if (bad >= 0) return n + bad;
    const BackwardArgs args = {H, parent_local, src, weight, child, table, dst, assign != 0};
    int sorted = 1;
    for (int64_t j = 1; j < n; j++)
        if (parent_local[j] < parent_local[j - 1]) {
            sorted = 0;
            break;
        }
    if (assign && !sorted) return CK_BAD_ARGS; /* a parent's children must be one run */
    const int parts = sorted ? ds_pool_parts(threads, n, H) : 1; /* unsorted: parts could share a parent row */
    const int chunks = ds_pool_chunks(parts, n, MAX_CHUNKS);
    int64_t bounds[MAX_CHUNKS + 1];
    even_bounds(n, chunks, bounds);
    /* move each inner bound forward to the start of a parent's run of children */
    for (int i = 1; i < chunks; i++) {
        int64_t b = bounds[i] < bounds[i - 1] ? bounds[i - 1] : bounds[i];
        while (b > 0 && b < n && parent_local[b] == parent_local[b - 1]) b++;
        bounds[i] = b;
    }
    ds_pool_run(backward_range, &args, bounds, chunks, parts);
    return CK_OK;
}

/* ------------------------------------------------------------------ regrets */
/* r += (cv - nv) * v, then floored at 0 or discounted (pos where positive, neg elsewhere) */
CK_INLINE void add_regrets(float *restrict r, const float *restrict cv, const float *restrict nv, float v,
                           int64_t n, int floor, float pos, float neg) {
    if (floor) {
        for (int64_t h = 0; h < n; h++) {
            const float x = r[h] + (cv[h] - nv[h]) * v;
            r[h] = x < 0.0f ? 0.0f : x;
        }
    } else {
        for (int64_t h = 0; h < n; h++) {
            const float x = r[h] + (cv[h] - nv[h]) * v;
            r[h] = x * (x > 0.0f ? pos : neg);
        }
    }
}

/* inv = 1 / max(total, 1e-30) (the floor keeps a zero total finite: such hands play uniform).
 * Select and division in two loops, kept apart by a compiler barrier: written as one, gcc
 * keeps the division behind a branch and divides one hand at a time (trapping math). */
CK_INLINE void reciprocals(float *restrict inv, const float *restrict total, int64_t n) {
    for (int64_t h = 0; h < n; h++) inv[h] = total[h] > 1e-30f ? total[h] : 1e-30f;
    CK_BARRIER();
    for (int64_t h = 0; h < n; h++) inv[h] = 1.0f / inv[h];
    CK_BARRIER();
}

/* s = total > 0 ? max(r, 0) * v / total : uniform, with inv = 1 / total given and quot scratch;
 * with `stream`, s is written with non-temporal stores where it is 16-byte aligned */
CK_INLINE void match_regrets(float *restrict s, const float *restrict r, const float *restrict total,
                             const float *restrict inv, float *restrict quot, float v, float uniform, int64_t n,
                             int stream) {
    /* product and select in two loops, kept apart by a compiler barrier: fused, gcc sinks the
     * product into a branch of the select (trapping math) and cannot vectorise it */
    for (int64_t h = 0; h < n; h++) quot[h] = ((r[h] < 0.0f ? 0.0f : r[h]) * v) * inv[h];
    CK_BARRIER();
#if CK_STREAM
    if (stream && ((uintptr_t)s & 15) == 0) {
        const __m128 u = _mm_set1_ps(uniform), zero = _mm_setzero_ps();
        int64_t h = 0;
        for (; h + 4 <= n; h += 4) {
            const __m128 pos = _mm_cmpgt_ps(_mm_loadu_ps(total + h), zero);
            _mm_stream_ps(s + h, _mm_or_ps(_mm_and_ps(pos, _mm_loadu_ps(quot + h)), _mm_andnot_ps(pos, u)));
        }
        for (; h < n; h++) s[h] = total[h] > 0.0f ? quot[h] : uniform;
        return;
    }
#endif
    for (int64_t h = 0; h < n; h++) s[h] = total[h] > 0.0f ? quot[h] : uniform;
}
typedef struct {
    int64_t A, H;
    const int64_t *dec_rows, *dec_children;
    const float *valid, *values;
    float *regrets;
    int floor;
    float pos, neg;
    float *strategy; /* regrets_strategy only */
    int stream;      /* regrets_strategy only: stream the strategy rows to memory */
} RegretArgs;

CK_CLONES static void regrets_range(const void *vargs, int64_t lo, int64_t hi) {
    const RegretArgs *g = (const RegretArgs *)vargs;
    const int64_t A = g->A, H = g->H;
    const float pos = g->pos, neg = g->neg;
    for (int64_t m = lo; m < hi; m++) {
        const float *restrict nv = g->values + g->dec_rows[m] * H;
        for (int64_t a = 0; a < A; a++) {
            const float *restrict cv = g->values + g->dec_children[m * A + a] * H;
            const float v = g->valid[m * A + a];
            add_regrets(g->regrets + (m * A + a) * H, cv, nv, v, H, g->floor, pos, neg);
        }
    }
}

int64_t ds_cfr_regrets(int64_t M, int64_t A, int64_t H, const int64_t *dec_rows,
                       const int64_t *dec_children, const float *valid, const float *values,
                       int64_t n_rows, float *regrets, int floor, float pos, float neg, int threads) {
    if (M < 0 || A < 1 || H < 1 || n_rows < 0) return CK_BAD_ARGS;
    if (M == 0) return CK_OK;
    if (!dec_rows || !dec_children || !valid || !values || !regrets) return CK_BAD_ARGS;
    int64_t bad = first_bad_index(dec_rows, M, n_rows);
    if (bad >= 0) return bad;
    bad = first_bad_index(dec_children, M * A, n_rows);
    if (bad >= 0) return M + bad;
    const RegretArgs args = {A, H, dec_rows, dec_children, valid, values, regrets, floor != 0, pos, neg, NULL, 0};
    run_even(regrets_range, &args, M, A * H, threads);
    return CK_OK;
}

/* ------------------------------------------------------------------ strategy */
typedef struct {
    int64_t A, H;
    const float *valid, *regrets;
    float *strategy;
} StrategyArgs;

CK_CLONES static void strategy_range(const void *vargs, int64_t lo, int64_t hi) {
    const StrategyArgs *g = (const StrategyArgs *)vargs;
    const int64_t A = g->A, H = g->H;
    float total[CHUNK], inv[CHUNK], quot[CHUNK];
    for (int64_t m = lo; m < hi; m++) {
        const float *restrict valid = g->valid + m * A;
        float n_valid = 0.0f;
        for (int64_t a = 0; a < A; a++) n_valid += valid[a];
        for (int64_t h0 = 0; h0 < H; h0 += CHUNK) {
            const int64_t nh = H - h0 < CHUNK ? H - h0 : CHUNK;
            for (int64_t h = 0; h < nh; h++) total[h] = 0.0f;
            for (int64_t a = 0; a < A; a++) {
                const float *restrict r = g->regrets + (m * A + a) * H + h0;
                const float v = valid[a];
                for (int64_t h = 0; h < nh; h++) {
                    const float x = r[h] < 0.0f ? 0.0f : r[h];
                    total[h] += x * v;
                }
            }
            /* one division per hand, not one per action: the actions share the total */
            reciprocals(inv, total, nh);
            for (int64_t a = 0; a < A; a++) {
                const float *restrict r = g->regrets + (m * A + a) * H + h0;
                float *restrict s = g->strategy + (m * A + a) * H + h0;
                const float v = valid[a];
                match_regrets(s, r, total, inv, quot, v, n_valid != 0.0f ? v / n_valid : 0.0f, nh, 0);
            }
        }
    }
}

int64_t ds_cfr_strategy(int64_t M, int64_t A, int64_t H, const float *valid, const float *regrets,
                        float *strategy, int threads) {
    if (M < 0 || A < 1 || H < 1) return CK_BAD_ARGS;
    if (M == 0) return CK_OK;
    if (!valid || !regrets || !strategy) return CK_BAD_ARGS;
    const StrategyArgs args = {A, H, valid, regrets, strategy};
    run_even(strategy_range, &args, M, A * H, threads);
    return CK_OK;
}

/* ------------------------------------------------------------------ regrets + strategy */
/* The regrets kernel and then the strategy kernel in one pass over each decision (a block of
 * CHUNK hands at a time, so the regrets just written are still in cache when regret matching
 * reads them), skipping the actions with valid == 0: their regrets and strategy are left as they
 * are (0 in a solver: regrets start at 0 and the first regret matching writes 0 there). The
 * arithmetic is that of the two kernels, in the same order: the results agree bit for bit. */
CK_CLONES static void regrets_strategy_range(const void *vargs, int64_t lo, int64_t hi) {
    const RegretArgs *g = (const RegretArgs *)vargs;
    const int64_t A = g->A, H = g->H;
    const float pos = g->pos, neg = g->neg;
    float total[CHUNK], inv[CHUNK], quot[CHUNK];
    for (int64_t m = lo; m < hi; m++) {
        const float *restrict valid = g->valid + m * A;
        float n_valid = 0.0f;
        for (int64_t a = 0; a < A; a++) n_valid += valid[a];
        const float *restrict nv0 = g->values + g->dec_rows[m] * H;
        for (int64_t h0 = 0; h0 < H; h0 += CHUNK) {
            const int64_t nh = H - h0 < CHUNK ? H - h0 : CHUNK;
            const float *restrict nv = nv0 + h0;
            int first = 1; /* the first valid action writes the totals (0 + y == y for y >= 0) */
            for (int64_t a = 0; a < A; a++) {
                const float v = valid[a];
                if (v == 0.0f) continue;
                const float *restrict cv = g->values + g->dec_children[m * A + a] * H + h0;
                float *restrict r = g->regrets + (m * A + a) * H + h0;
                add_regrets(r, cv, nv, v, nh, g->floor, pos, neg);
                CK_BARRIER();
                if (first) {
                    for (int64_t h = 0; h < nh; h++) total[h] = (r[h] < 0.0f ? 0.0f : r[h]) * v;
                    first = 0;
                    continue;
                }
                for (int64_t h = 0; h < nh; h++) {
                    const float x = r[h] < 0.0f ? 0.0f : r[h];
                    total[h] += x * v;
                }
            }
            if (first) /* no valid action */
                for (int64_t h = 0; h < nh; h++) total[h] = 0.0f;
            reciprocals(inv, total, nh);
            for (int64_t a = 0; a < A; a++) {
                const float v = valid[a];
                if (v == 0.0f) continue;
                const float *restrict r = g->regrets + (m * A + a) * H + h0;
                float *restrict s = g->strategy + (m * A + a) * H + h0;
                match_regrets(s, r, total, inv, quot, v, v / n_valid, nh, g->stream);
            }
        }
    }
#if CK_STREAM
    if (g->stream) _mm_sfence(); /* the streamed strategy rows are visible to other threads from here */
#endif
}

static int64_t regrets_strategy(int64_t M, int64_t A, int64_t H, const int64_t *dec_rows,
                                const int64_t *dec_children, const float *valid, const float *values,
                                int64_t n_rows, float *regrets, float *strategy, int floor, float pos,
                                float neg, int stream, int threads) {
    if (M < 0 || A < 1 || H < 1 || n_rows < 0) return CK_BAD_ARGS;
    if (M == 0) return CK_OK;
    if (!dec_rows || !dec_children || !valid || !values || !regrets || !strategy) return CK_BAD_ARGS;
    int64_t bad = first_bad_index(dec_rows, M, n_rows);
    if (bad >= 0) return bad;
    bad = first_bad_index(dec_children, M * A, n_rows);
    if (bad >= 0) return M + bad;
    const RegretArgs args = {A, H, dec_rows, dec_children, valid, values, regrets, floor != 0, pos, neg, strategy,
                             stream};
    run_even(regrets_strategy_range, &args, M, A * H, threads);
    return CK_OK;
}

int64_t ds_cfr_regrets_strategy(int64_t M, int64_t A, int64_t H, const int64_t *dec_rows,
                                const int64_t *dec_children, const float *valid, const float *values,
                                int64_t n_rows, float *regrets, float *strategy, int floor, float pos,
                                float neg, int threads) {
    return regrets_strategy(M, A, H, dec_rows, dec_children, valid, values, n_rows, regrets, strategy, floor, pos,
                            neg, 0, threads);
}

int64_t ds_cfr_regrets_strategy_stream(int64_t M, int64_t A, int64_t H, const int64_t *dec_rows,
                                       const int64_t *dec_children, const float *valid, const float *values,
                                       int64_t n_rows, float *regrets, float *strategy, int floor, float pos,
                                       float neg, int threads) {
    return regrets_strategy(M, A, H, dec_rows, dec_children, valid, values, n_rows, regrets, strategy, floor, pos,
                            neg, 1, threads);
}

/* ------------------------------------------------------------------ average */
typedef struct {
    int64_t A, H;
    const int64_t *dec_rows;
    const float *strategy, *reach;
    float w;
    float *strategy_sum;
} AverageArgs;

CK_CLONES static void average_range(const void *vargs, int64_t lo, int64_t hi) {
    const AverageArgs *g = (const AverageArgs *)vargs;
    const int64_t A = g->A, H = g->H;
    const float w = g->w;
    for (int64_t m = lo; m < hi; m++) {
        const float *restrict r = g->reach + g->dec_rows[m] * H;
        for (int64_t a = 0; a < A; a++) {
            const float *restrict s = g->strategy + (m * A + a) * H;
            float *restrict ss = g->strategy_sum + (m * A + a) * H;
            for (int64_t h = 0; h < H; h++) ss[h] += w * (s[h] * r[h]);
        }
    }
}

int64_t ds_cfr_average(int64_t M, int64_t A, int64_t H, const int64_t *dec_rows, const float *strategy,
                       const float *reach, int64_t n_rows, float w, float *strategy_sum, int threads) {
    if (M < 0 || A < 1 || H < 1 || n_rows < 0) return CK_BAD_ARGS;
    if (M == 0) return CK_OK;
    if (!dec_rows || !strategy || !reach || !strategy_sum) return CK_BAD_ARGS;
    const int64_t bad = first_bad_index(dec_rows, M, n_rows);
    if (bad >= 0) return bad;
    const AverageArgs args = {A, H, dec_rows, strategy, reach, w, strategy_sum};
    run_even(average_range, &args, M, A * H, threads);
    return CK_OK;
}

/* ------------------------------------------------------------------ add_rows */
typedef struct {
    int64_t H;
    const int64_t *rows;
    const float *src;
    float w;
    float *dst;
} AddRowsArgs;

CK_CLONES static void add_rows_range(const void *vargs, int64_t lo, int64_t hi) {
    const AddRowsArgs *g = (const AddRowsArgs *)vargs;
    const int64_t H = g->H;
    const float w = g->w;
    for (int64_t i = lo; i < hi; i++) {
        const float *restrict s = g->src + (g->rows ? g->rows[i] : i) * H;
        float *restrict d = g->dst + i * H;
        for (int64_t h = 0; h < H; h++) d[h] += w * s[h];
    }
}

int64_t ds_cfr_add_rows(int64_t n, int64_t H, const int64_t *rows, const float *src, int64_t n_src, float w,
                        float *dst, int threads) {
    if (n < 0 || H < 1 || n_src < 0) return CK_BAD_ARGS;
    if (n == 0) return CK_OK;
    if (!src || !dst) return CK_BAD_ARGS;
    if (rows) {
        const int64_t bad = first_bad_index(rows, n, n_src);
        if (bad >= 0) return bad;
    } else if (n > n_src) {
        return CK_BAD_ARGS;
    }
    const AddRowsArgs args = {H, rows, src, w, dst};
    run_even(add_rows_range, &args, n, H, threads);
    return CK_OK;
}

/* ------------------------------------------------------------------ max_rows */
/* a best response's value at its decisions: the best valid child, hand by hand */
CK_CLONES static void max_row(float *restrict d, const float *const *children, int64_t k, int64_t H) {
    memcpy(d, children[0], (size_t)H * sizeof *d);
    for (int64_t a = 1; a < k; a++) {
        const float *restrict c = children[a];
        for (int64_t h = 0; h < H; h++) d[h] = c[h] > d[h] ? c[h] : d[h];
    }
}

int64_t ds_cfr_max_rows(int64_t M, int64_t A, int64_t H, const int64_t *dec_rows, const int64_t *dec_children,
                        const float *valid, float *values, int64_t n_rows) {
    if (M < 0 || A < 1 || A > 64 || H < 1 || n_rows < 0) return CK_BAD_ARGS;
    if (M == 0) return CK_OK;
    if (!dec_rows || !dec_children || !valid || !values) return CK_BAD_ARGS;
    int64_t bad = first_bad_index(dec_rows, M, n_rows);
    if (bad >= 0) return bad;
    bad = first_bad_index(dec_children, M * A, n_rows);
    if (bad >= 0) return M + bad;
    const float *children[64];
    for (int64_t m = 0; m < M; m++) {
        float *d = values + dec_rows[m] * H;
        int64_t k = 0;
        for (int64_t a = 0; a < A; a++)
            if (valid[m * A + a] != 0.0f) {
                const float *c = values + dec_children[m * A + a] * H;
                if (c == d) return CK_BAD_ARGS; /* a decision's row among its own children */
                children[k++] = c;
            }
        if (k == 0) {
            for (int64_t h = 0; h < H; h++) d[h] = -__builtin_inff();
            continue;
        }
        max_row(d, children, k, H);
    }
    return CK_OK;
}
