/* Checks the fused CFR kernels (cfr_kernels.c) against plain reference loops, with one and
 * several threads, and every out-of-range index; built and run under AddressSanitizer and
 * UBSan by tests/native/test_c_sanitizers.py. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

static int failures = 0;
#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            failures++;                                                      \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                      \
            printf(__VA_ARGS__);                                             \
            printf("\n");                                                    \
        }                                                                    \
    } while (0)

static uint64_t rng_state = 12345;
static float frand(void) { /* xorshift, in [0, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)(rng_state >> 40) / (float)(1u << 24);
}
static int64_t irand(int64_t n) { return (int64_t)(frand() * (float)n) % n; }

static float *fill(int64_t n) {
    float *x = malloc((size_t)n * sizeof *x);
    for (int64_t i = 0; i < n; i++) x[i] = frand() - 0.3f;
    return x;
}

static int close_enough(const float *a, const float *b, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (fabsf(a[i] - b[i]) > 1e-4f * (1.0f + fabsf(b[i]))) return 0;
    return 1;
}

static void check_forward_backward(int64_t H, int threads) {
    const int64_t n = 40, P = 9, T = 7;
    int64_t pl[40], src[40];
    for (int64_t j = 0; j < n; j++) pl[j] = irand(P), src[j] = irand(T);
    float *parent = fill(P * H), *table = fill(T * H), *weight = fill(n), *child = fill(n * H);
    float *out = calloc((size_t)(n * H), sizeof(float)), *ref = calloc((size_t)(n * H), sizeof(float));
    CHECK(ds_cfr_forward(n, H, pl, src, parent, P, table, T, out, threads) == -1, "forward rc");
    for (int64_t j = 0; j < n; j++)
        for (int64_t h = 0; h < H; h++) ref[j * H + h] = parent[pl[j] * H + h] * table[src[j] * H + h];
    CHECK(close_enough(out, ref, n * H), "forward values (H=%lld threads=%d)", (long long)H, threads);

    float *dst = calloc((size_t)(P * H), sizeof(float)), *dref = calloc((size_t)(P * H), sizeof(float));
    CHECK(ds_cfr_backward(n, H, pl, src, weight, child, table, T, dst, P, 0, threads) == -1, "backward rc");
    for (int64_t j = 0; j < n; j++)
        for (int64_t h = 0; h < H; h++) dref[pl[j] * H + h] += child[j * H + h] * table[src[j] * H + h] * weight[j];
    CHECK(close_enough(dst, dref, P * H), "backward values (H=%lld threads=%d)", (long long)H, threads);
    /* assign: parents in runs (sorted), stale values in dst, every parent given a child */
    int64_t spl[40];
    for (int64_t j = 0; j < n; j++) spl[j] = j * P / n;
    for (int64_t i = 0; i < P * H; i++) dst[i] = 99.0f, dref[i] = 0.0f;
    CHECK(ds_cfr_backward(n, H, spl, src, weight, child, table, T, dst, P, 1, threads) == -1, "backward assign rc");
    for (int64_t j = 0; j < n; j++)
        for (int64_t h = 0; h < H; h++) dref[spl[j] * H + h] += child[j * H + h] * table[src[j] * H + h] * weight[j];
    CHECK(close_enough(dst, dref, P * H), "backward assign values (H=%lld threads=%d)", (long long)H, threads);
    CHECK(ds_cfr_backward(n, H, pl, src, weight, child, table, T, dst, P, 1, threads) == -2, "backward assign unsorted");

    /* bad indices: reported by position, nothing written */
    memset(out, 0, (size_t)(n * H) * sizeof(float));
    pl[5] = P;
    CHECK(ds_cfr_forward(n, H, pl, src, parent, P, table, T, out, threads) == 5, "forward bad parent index");
    pl[5] = 0;
    src[3] = -1;
    CHECK(ds_cfr_forward(n, H, pl, src, parent, P, table, T, out, threads) == n + 3, "forward bad table index");
    CHECK(ds_cfr_backward(n, H, pl, src, NULL, child, table, T, dst, P, 0, threads) == n + 3, "backward bad index");
    int64_t written = 0;
    for (int64_t i = 0; i < n * H; i++) written += out[i] != 0.0f;
    CHECK(written == 0, "forward wrote %lld values despite a bad index", (long long)written);
    CHECK(ds_cfr_forward(-1, H, pl, src, parent, P, table, T, out, threads) == -2, "forward bad size");

    /* forward_rows: the listed rows as forward writes them, bit for bit; the others untouched */
    src[3] = 0;
    int64_t some[3] = {n - 1, 0, 7};
    for (int64_t i = 0; i < n * H; i++) out[i] = -1.0f;
    CHECK(ds_cfr_forward(n, H, pl, src, parent, P, table, T, ref, threads) == -1, "forward rc");
    CHECK(ds_cfr_forward_rows(3, H, some, n, pl, src, parent, P, table, T, out, threads) == -1, "forward_rows rc");
    for (int64_t j = 0; j < n; j++) {
        const int listed = j == some[0] || j == some[1] || j == some[2];
        for (int64_t h = 0; h < H; h++)
            CHECK(listed ? out[j * H + h] == ref[j * H + h] : out[j * H + h] == -1.0f, "forward_rows row %lld",
                  (long long)j);
    }
    some[1] = n;
    CHECK(ds_cfr_forward_rows(3, H, some, n, pl, src, parent, P, table, T, out, threads) == 1, "forward_rows bad row");
    some[1] = 0;
    pl[7] = -1;
    CHECK(ds_cfr_forward_rows(3, H, some, n, pl, src, parent, P, table, T, out, threads) == 3 + 2,
          "forward_rows bad parent index");
    pl[7] = 0;
    src[n - 1] = T;
    CHECK(ds_cfr_forward_rows(3, H, some, n, pl, src, parent, P, table, T, out, threads) == 2 * 3 + 0,
          "forward_rows bad table index");
    src[n - 1] = 0;
    CHECK(ds_cfr_forward_rows(-1, H, some, n, pl, src, parent, P, table, T, out, threads) == -2, "forward_rows bad size");
    free(parent), free(table), free(weight), free(child), free(out), free(ref), free(dst), free(dref);
}

static void check_decisions(int64_t H, int threads) {
    const int64_t M = 6, A = 3, N = 30;
    int64_t rows[6], children[18];
    float valid[18];
    for (int64_t m = 0; m < M; m++) {
        rows[m] = m;
        for (int64_t a = 0; a < A; a++) {
            children[m * A + a] = M + m * A + a;
            valid[m * A + a] = (a < 2 || m % 2) ? 1.0f : 0.0f;
        }
    }
    float *values = fill(N * H), *regrets = fill(M * A * H), *reg_ref = malloc((size_t)(M * A * H) * sizeof(float));
    memcpy(reg_ref, regrets, (size_t)(M * A * H) * sizeof(float));
    CHECK(ds_cfr_regrets(M, A, H, rows, children, valid, values, N, regrets, 0, 0.8f, 0.5f, threads) == -1, "regrets rc");
    for (int64_t m = 0; m < M; m++)
        for (int64_t a = 0; a < A; a++)
            for (int64_t h = 0; h < H; h++) {
                float *r = &reg_ref[(m * A + a) * H + h];
                *r += (values[children[m * A + a] * H + h] - values[rows[m] * H + h]) * valid[m * A + a];
                *r *= *r > 0 ? 0.8f : 0.5f;
            }
    CHECK(close_enough(regrets, reg_ref, M * A * H), "discounted regrets (threads=%d)", threads);

    float *strategy = malloc((size_t)(M * A * H) * sizeof(float));
    CHECK(ds_cfr_strategy(M, A, H, valid, regrets, strategy, threads) == -1, "strategy rc");
    for (int64_t m = 0; m < M; m++)
        for (int64_t h = 0; h < H; h++) {
            float total = 0, nvalid = 0, sum = 0;
            for (int64_t a = 0; a < A; a++) {
                float r = regrets[(m * A + a) * H + h];
                total += (r > 0 ? r : 0) * valid[m * A + a];
                nvalid += valid[m * A + a];
            }
            for (int64_t a = 0; a < A; a++) {
                float r = regrets[(m * A + a) * H + h];
                float want = total > 0 ? (r > 0 ? r : 0) * valid[m * A + a] / total : valid[m * A + a] / nvalid;
                float got = strategy[(m * A + a) * H + h];
                CHECK(fabsf(got - want) < 1e-5f, "strategy m=%lld a=%lld h=%lld", (long long)m, (long long)a, (long long)h);
                sum += got;
            }
            CHECK(fabsf(sum - 1.0f) < 1e-5f, "strategy sums to %f", sum);
        }

    /* fused regrets + strategy from the regrets before this iteration: the same as the two */
    float *fr = malloc((size_t)(M * A * H) * sizeof(float)), *fs = calloc((size_t)(M * A * H), sizeof(float));
    float *pre = malloc((size_t)(M * A * H) * sizeof(float));
    memcpy(fr, regrets, (size_t)(M * A * H) * sizeof(float));
    memcpy(pre, regrets, (size_t)(M * A * H) * sizeof(float));
    CHECK(ds_cfr_regrets(M, A, H, rows, children, valid, values, N, regrets, 0, 0.8f, 0.5f, threads) == -1, "regrets rc 2");
    CHECK(ds_cfr_strategy(M, A, H, valid, regrets, strategy, threads) == -1, "strategy rc 2");
    CHECK(ds_cfr_regrets_strategy(M, A, H, rows, children, valid, values, N, fr, fs, 0, 0.8f, 0.5f, threads) == -1,
          "regrets_strategy rc");
    for (int64_t i = 0; i < M * A * H; i++) {
        const int on = valid[i / H] != 0.0f;
        CHECK(on ? fr[i] == regrets[i] && fs[i] == strategy[i] : fr[i] == pre[i] && fs[i] == 0.0f,
              "regrets_strategy at %lld (threads=%d)", (long long)i, threads);
    }
    /* the streamed variant (non-temporal strategy stores where aligned): the same bits */
    float *gr = malloc((size_t)(M * A * H) * sizeof(float)), *gs = calloc((size_t)(M * A * H), sizeof(float));
    memcpy(gr, pre, (size_t)(M * A * H) * sizeof(float));
    CHECK(ds_cfr_regrets_strategy_stream(M, A, H, rows, children, valid, values, N, gr, gs, 0, 0.8f, 0.5f, threads) ==
              -1,
          "regrets_strategy_stream rc");
    CHECK(memcmp(gr, fr, (size_t)(M * A * H) * sizeof(float)) == 0 &&
              memcmp(gs, fs, (size_t)(M * A * H) * sizeof(float)) == 0,
          "regrets_strategy_stream differs (H=%lld threads=%d)", (long long)H, threads);
    free(fr), free(fs), free(pre), free(gr), free(gs);

    float *ssum = calloc((size_t)(M * A * H), sizeof(float)), *reach = fill(N * H);
    CHECK(ds_cfr_average(M, A, H, rows, strategy, reach, N, 2.0f, ssum, threads) == -1, "average rc");
    for (int64_t m = 0; m < M; m++)
        for (int64_t a = 0; a < A; a++)
            for (int64_t h = 0; h < H; h++) {
                float want = 2.0f * strategy[(m * A + a) * H + h] * reach[rows[m] * H + h];
                CHECK(fabsf(ssum[(m * A + a) * H + h] - want) < 1e-5f, "average");
            }

    int64_t add[4] = {29, 0, 7, 7};
    float *dst = calloc((size_t)(4 * H), sizeof(float));
    CHECK(ds_cfr_add_rows(4, H, add, values, N, 0.5f, dst, threads) == -1, "add_rows rc");
    for (int64_t i = 0; i < 4; i++)
        for (int64_t h = 0; h < H; h++) CHECK(fabsf(dst[i * H + h] - 0.5f * values[add[i] * H + h]) < 1e-6f, "add_rows");

    /* bad indices */
    rows[2] = N;
    CHECK(ds_cfr_regrets(M, A, H, rows, children, valid, values, N, regrets, 1, 1, 1, threads) == 2, "regrets bad row");
    CHECK(ds_cfr_average(M, A, H, rows, strategy, reach, N, 1.0f, ssum, threads) == 2, "average bad row");
    rows[2] = 2;
    children[4] = -7;
    CHECK(ds_cfr_regrets(M, A, H, rows, children, valid, values, N, regrets, 1, 1, 1, threads) == M + 4, "regrets bad child");
    CHECK(ds_cfr_regrets_strategy(M, A, H, rows, children, valid, values, N, regrets, strategy, 1, 1, 1, threads) == M + 4,
          "regrets_strategy bad child");
    add[1] = N;
    CHECK(ds_cfr_add_rows(4, H, add, values, N, 1.0f, dst, threads) == 1, "add_rows bad row");
    CHECK(ds_cfr_add_rows(4, H, NULL, values, 3, 1.0f, dst, threads) == -2, "add_rows too few source rows");
    free(values), free(regrets), free(reg_ref), free(strategy), free(ssum), free(reach), free(dst);
}

static void check_max_rows_and_program(int64_t H, int threads) {
    /* rows 0 and 1 are decisions over rows 2..5; row 1 has action 1 invalid */
    const int64_t M = 2, A = 2, N = 6;
    float *values = fill(N * H);
    const int64_t rows[] = {0, 1}, children[] = {2, 3, 4, 5};
    const float valid[] = {1.0f, 1.0f, 1.0f, 0.0f};
    CHECK(ds_cfr_max_rows(M, A, H, rows, children, valid, values, N) == -1, "max_rows rc");
    for (int64_t h = 0; h < H; h++) {
        const float a = values[2 * H + h], b = values[3 * H + h];
        CHECK(values[h] == (a > b ? a : b), "max_rows row 0 h=%lld", (long long)h);
        CHECK(values[H + h] == values[4 * H + h], "max_rows row 1 (one valid action) h=%lld", (long long)h);
    }
    const int64_t bad_children[] = {2, 3, 4, 9};
    CHECK(ds_cfr_max_rows(M, A, H, rows, bad_children, valid, values, N) == M + 3, "max_rows bad child");
    const int64_t self_child[] = {0, 3, 4, 5};
    CHECK(ds_cfr_max_rows(M, A, H, rows, self_child, valid, values, N) == -2, "max_rows row among its children");

    /* a program: copy a row, then a forward step, then a weighted add (skipped at w <= 0) */
    float *parent = fill(2 * H), *table = fill(2 * H), *out = fill(2 * H), *sum = calloc((size_t)(2 * H), sizeof(float));
    const int64_t pl[] = {0, 0}, src[] = {1, 0};
    ds_op ops[3];
    memset(ops, 0, sizeof ops);
    ops[0].op = DS_OP_COPY;
    ops[0].n[0] = H;
    ops[0].p[0] = parent + H;
    ops[0].p[1] = parent;
    ops[1].op = DS_OP_FORWARD;
    ops[1].n[0] = 2, ops[1].n[1] = H, ops[1].n[2] = 2, ops[1].n[3] = 2;
    ops[1].p[0] = pl, ops[1].p[1] = src, ops[1].p[2] = parent, ops[1].p[3] = table, ops[1].p[4] = out;
    ops[2].op = DS_OP_ADD_ROWS;
    ops[2].n[0] = 2, ops[2].n[1] = H, ops[2].n[2] = 2;
    ops[2].p[0] = NULL, ops[2].p[1] = out, ops[2].p[2] = sum;
    int64_t failed = 7;
    CHECK(ds_cfr_program(ops, 3, 0.0f, 1.0f, 1.0f, threads, &failed) == -1 && failed == -1, "program rc");
    for (int64_t h = 0; h < H; h++) {
        CHECK(parent[h] == parent[H + h], "program copy h=%lld", (long long)h);
        CHECK(out[h] == parent[h] * table[H + h] && out[H + h] == parent[h] * table[h], "program forward");
        CHECK(sum[h] == 0.0f, "program add at w = 0");
    }
    CHECK(ds_cfr_program(ops, 3, 2.0f, 1.0f, 1.0f, threads, &failed) == -1, "program rc 2");
    CHECK(sum[H] == 2.0f * out[H], "program add at w = 2");
    ops[1].p[1] = bad_children; /* src index 3 of a 2-row table */
    CHECK(ds_cfr_program(ops, 3, 1.0f, 1.0f, 1.0f, threads, &failed) == 2 + 0 && failed == 1, "program bad op");
    ops[1].op = 99;
    CHECK(ds_cfr_program(ops, 3, 1.0f, 1.0f, 1.0f, threads, &failed) == -2 && failed == 1, "program unknown op");
    free(values), free(parent), free(table), free(out), free(sum);
}

int main(void) {
    const int64_t sizes[] = {1, 6, 1326, 3000};
    for (int s = 0; s < 4; s++)
        for (int threads = 1; threads <= 3; threads += 2) {
            check_forward_backward(sizes[s], threads);
            check_decisions(sizes[s], threads);
            check_max_rows_and_program(sizes[s], threads);
        }
    if (failures) {
        printf("%d checks failed\n", failures);
        return 1;
    }
    printf("cfr kernels: all checks passed\n");
    return 0;
}
