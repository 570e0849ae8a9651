/* Network leaves of a depth-limited re-solve, between hands and buckets (float32, one pass each).
 *
 * A leaf of the lookahead is asked once per next-round board: network row r is leaf rows[r] on
 * its own board, where hand h falls in bucket slots[r, h] (valid[r, h] = 0 where the board
 * blocks the hand). agent/leaves/holdem.py's BucketNetLeafValues does, per iteration:
 *
 *   encode  mass[p, r] = sum_h reach[p, rows[r], h] * valid[r, h]
 *           x[r] = [pot[r] * inv_stack, B_0[r, :], B_1[r, :]],  B_p[r, k] = (sum over the hands of
 *           bucket k of reach * valid) / max(mass[p, r], 1e-30)        (the network's input)
 *   decode  vals[p, r, h] = ((net[r, p * K + slots[r, h]] * valid[r, h]) * pot[r]) * mass[1 - p, r]
 *           acc[p, l, h] = sum over r with rows[r] = l, in order, of vals[p, r, h] * weight[r]
 *
 * the torch code's arithmetic in the same order, except that the sums run hand by hand (float32
 * rounding apart, the same values). A bucket index
 * out of range stops the call with its flat position (the outputs are then scratch).
 * Returns -1 done, >= 0 the position of a bad index (rows: r; slots: R + r * H + h), -2 bad sizes.
 */
#include <stdint.h>
#include <string.h>

#include "native.h"

enum { LB_OK = -1, LB_BAD_ARGS = -2 };

int64_t ds_leaf_encode(int64_t R, int64_t H, int64_t K, int64_t L, const int64_t *rows, const float *reach,
                       const int32_t *slots, const float *valid, const float *pot, float inv_stack, float *x,
                       float *mass) {
    if (R < 0 || H < 1 || K < 1 || L < 0) return LB_BAD_ARGS;
    if (R == 0) return LB_OK;
    if (!rows || !reach || !slots || !valid || !pot || !x || !mass) return LB_BAD_ARGS;
    const int64_t width = 1 + 2 * K;
    for (int64_t r = 0; r < R; r++) {
        if ((uint64_t)rows[r] >= (uint64_t)L) return r;
        const int32_t *s = slots + r * H;
        const float *v = valid + r * H;
        float *xr = x + r * width;
        xr[0] = pot[r] * inv_stack;
        memset(xr + 1, 0, (size_t)(2 * K) * sizeof *xr);
        for (int p = 0; p < 2; p++) {
            const float *q = reach + ((int64_t)p * L + rows[r]) * H;
            float *b = xr + 1 + p * K;
            float total = 0.0f;
            for (int64_t h = 0; h < H; h++) {
                if ((uint32_t)s[h] >= (uint64_t)K) return R + r * H + h;
                const float m = q[h] * v[h];
                b[s[h]] += m;
                total += m;
            }
            mass[p * R + r] = total;
            const float denom = total > 1e-30f ? total : 1e-30f;
            for (int64_t k = 0; k < K; k++) b[k] /= denom;
        }
    }
    return LB_OK;
}

int64_t ds_leaf_decode(int64_t R, int64_t H, int64_t K, int64_t L, const int64_t *rows, const float *net,
                       const int32_t *slots, const float *valid, const float *pot, const float *mass,
                       const float *weight, float *vals, float *acc) {
    if (R < 0 || H < 1 || K < 1 || L < 0) return LB_BAD_ARGS;
    if (!acc && L > 0) return LB_BAD_ARGS;
    if (L > 0) memset(acc, 0, (size_t)(2 * L * H) * sizeof *acc);
    if (R == 0) return LB_OK;
    if (!rows || !net || !slots || !valid || !pot || !mass || !weight || !vals) return LB_BAD_ARGS;
    for (int64_t r = 0; r < R; r++)
        if ((uint64_t)rows[r] >= (uint64_t)L) return r;
    for (int p = 0; p < 2; p++)
        for (int64_t r = 0; r < R; r++) {
            const int32_t *s = slots + r * H;
            const float *v = valid + r * H;
            const float *o = net + r * 2 * K + p * K;
            const float scale = pot[r], m = mass[(1 - p) * R + r], w = weight[r];
            float *out = vals + ((int64_t)p * R + r) * H;
            float *a = acc + ((int64_t)p * L + rows[r]) * H;
            for (int64_t h = 0; h < H; h++) {
                if ((uint32_t)s[h] >= (uint64_t)K) return R + r * H + h;
                out[h] = ((o[s[h]] * v[h]) * scale) * m;
            }
            for (int64_t h = 0; h < H; h++) a[h] += out[h] * w;
        }
    return LB_OK;
}
