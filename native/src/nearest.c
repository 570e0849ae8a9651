/* The L1-nearest centroid of each point: the bucket of a hand from its cumulative equity
 * histogram (agent/nets/buckets.py; the L1 distance between cumulative histograms is the earth
 * mover's distance between the histograms).
 *
 * A turn board asks this for ~1081 hands against 1000 centroids of 50 bins, and a flop re-solve
 * with network leaves for all 49 turn cards at once; torch.cdist(p=1) takes ~27 ms a board, this
 * ~7. The centroids are read transposed ([D, K]) and summed in registers for blocks of NP points
 * by NK centroids, the inner loop across centroids, which the compiler vectorises without
 * reordering any sum: dist[i, k] adds |x[i, d] - c[k, d]| for d = 0, 1, ... in order. Ties go to
 * the lowest centroid index (as torch.argmin).
 * Returns -1 done, -2 bad sizes.
 */
#include <math.h>
#include <stdint.h>

#include "native.h"

/* an AVX2 build besides the baseline one, picked at load time where the toolchain can (Linux, x86-64) */
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__)
#define NN_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NN_CLONES
#endif

enum { NN_OK = -1, NN_BAD_ARGS = -2, NP = 4, NK = 16 };

/* dist[b, k] for NP points (rows of x, stride D) against centroids k0 .. k0 + NK - 1, summed in
 * registers over d = 0 .. D - 1 in order */
static inline void block_dists(int64_t n, int64_t K, int64_t D, const float *x, const float *ct, int64_t k0,
                               float acc[NP][NK]) {
    for (int b = 0; b < NP; b++)
        for (int j = 0; j < NK; j++) acc[b][j] = 0.0f;
    for (int64_t d = 0; d < D; d++) {
        const float *c = ct + d * K + k0;
        for (int b = 0; b < NP; b++) {
            const float xb = x[(b < n ? b : 0) * D + d];
            for (int j = 0; j < NK; j++) acc[b][j] += fabsf(xb - c[j]);
        }
    }
}

NN_CLONES int64_t ds_nearest_l1(int64_t N, int64_t K, int64_t D, const float *points, const float *centroids_t,
                                int64_t *out) {
    if (N < 0 || K < 1 || D < 1) return NN_BAD_ARGS;
    if (N == 0) return NN_OK;
    if (!points || !centroids_t || !out) return NN_BAD_ARGS;
    const int64_t K_full = K - K % NK;
    for (int64_t i0 = 0; i0 < N; i0 += NP) {
        const int64_t n = N - i0 < NP ? N - i0 : NP;
        const float *x = points + i0 * D;
        float best[NP];
        int64_t arg[NP];
        for (int b = 0; b < NP; b++) best[b] = INFINITY, arg[b] = 0;
        float acc[NP][NK];
        for (int64_t k0 = 0; k0 < K_full; k0 += NK) {
            block_dists(n, K, D, x, centroids_t, k0, acc);
            for (int b = 0; b < NP; b++)
                for (int j = 0; j < NK; j++)
                    if (acc[b][j] < best[b]) best[b] = acc[b][j], arg[b] = k0 + j;
        }
        for (int64_t k = K_full; k < K; k++) /* the last K % NK centroids one at a time */
            for (int64_t b = 0; b < n; b++) {
                float s = 0.0f;
                for (int64_t d = 0; d < D; d++) s += fabsf(x[b * D + d] - centroids_t[d * K + k]);
                if (s < best[b]) best[b] = s, arg[b] = k;
            }
        for (int64_t b = 0; b < n; b++) out[i0 + b] = arg[b];
    }
    return NN_OK;
}
