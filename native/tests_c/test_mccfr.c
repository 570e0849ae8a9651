/* Checks external-sampling MCCFR (mccfr.c) on a game small enough to know its answer, and every
 * malformed tree and deal it must refuse before touching memory; built and run under
 * AddressSanitizer and UBSan by tests/native/test_c_sanitizers.py.
 *
 * The game: three cards (buckets 0 < 1 < 2), one dealt to each position, antes of 1. Position 0
 * checks (showdown for 1) or bets 1; position 1 then folds (position 0 wins 1) or calls (showdown
 * for 2). Position 1 must call with the best card and fold the worst; position 0 bets the best. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

#define CHECK_SEED UINT64_C(0x5DEECE66D)
#include "check.h"

enum { N = 5, B = 3, A = 2, SLOTS = 2 * B * A };

static const int8_t kind[N] = {0, 2, 0, 1, 2}; /* decision, showdown, decision, fold, showdown */
static const int8_t player[N] = {0, 0, 1, 0, 0};
static const int8_t round_[N] = {0, 0, 0, 0, 0};
static const int32_t first_child[N] = {1, 0, 3, 0, 0};
static const int8_t num_children[N] = {2, 0, 2, 0, 0};
static const float fold_value0[N] = {0, 0, 0, 1, 0};
static const float stake[N] = {0, 1, 0, 0, 2};
static const int32_t num_buckets[1] = {B};

static int64_t check_tree(const int64_t *slot, int64_t n_slots) {
    return ds_mccfr_check_tree(N, kind, player, round_, first_child, num_children, slot, fold_value0, stake, 1,
                               num_buckets, n_slots);
}

static int64_t iterate(const int64_t *slot, int64_t n, const int32_t *buckets, const int8_t *outcome,
                       const float *weight, float *regrets, float *sums, int mode, uint64_t seed, double *root) {
    int64_t n_exits = 0;
    return ds_mccfr_iterate(N, kind, player, round_, first_child, num_children, slot, fold_value0, stake, 1,
                            num_buckets, 1, 1, n, buckets, outcome, weight, SLOTS, regrets,
                            mode == 0 ? regrets : NULL, mode == 0 ? sums : NULL, mode, seed, 0, NULL, NULL, NULL,
                            &n_exits, NULL, 0, root);
}

/* n deals of two different cards: buckets [n][1][2][1], the outcome for position 0, weight 1 */
static void deal(int64_t n, int32_t *buckets, int8_t *outcome, float *weight) {
    for (int64_t i = 0; i < n; i++) {
        int a = (int)(next_random() % B), b;
        do b = (int)(next_random() % B);
        while (b == a);
        buckets[2 * i] = a;
        buckets[2 * i + 1] = b;
        outcome[i] = (int8_t)(a > b ? 1 : -1);
        weight[i] = 1.0f;
    }
}

static double average(const float *sums, int64_t base, int action) {
    double total = sums[base] + sums[base + 1];
    return total > 0 ? sums[base + action] / total : 0.5;
}

int main(void) {
    const int64_t slot[N] = {0, 0, B * A, 0, 0};
    CHECK(check_tree(slot, SLOTS) == -1, "the sound tree was refused");

    enum { DEALS = 4096, ROUNDS = 60 };
    int32_t *buckets = malloc(DEALS * 2 * sizeof *buckets);
    int8_t *outcome = malloc(DEALS);
    float *weight = malloc(DEALS * sizeof *weight);
    float *regrets = calloc(SLOTS, sizeof *regrets), *sums = calloc(SLOTS, sizeof *sums);
    double *root = malloc(DEALS * 2 * sizeof *root);
    for (int r = 0; r < ROUNDS; r++) {
        deal(DEALS, buckets, outcome, weight);
        int64_t rc = iterate(slot, DEALS, buckets, outcome, weight, regrets, sums, 0, (uint64_t)r + 1, NULL);
        CHECK(rc == -1, "iteration batch %d returned %lld", r, (long long)rc);
    }
    for (int s = 0; s < SLOTS; s++) CHECK(isfinite(regrets[s]) && isfinite(sums[s]), "slot %d not finite", s);
    /* position 1 facing the bet: slots B*A + bucket*A + (0 fold, 1 call) */
    CHECK(average(sums, B * A + 2 * A, 1) > 0.95, "position 1 calls the best card %.3f", average(sums, B * A + 2 * A, 1));
    CHECK(average(sums, B * A + 0 * A, 0) > 0.95, "position 1 folds the worst %.3f", average(sums, B * A, 0));
    CHECK(average(sums, 2 * A, 1) > 0.95, "position 0 bets the best card %.3f", average(sums, 2 * A, 1));

    float before[SLOTS];
    memcpy(before, regrets, sizeof before);
    int64_t rc = iterate(slot, DEALS, buckets, outcome, weight, regrets, sums, 3, 7, root);
    CHECK(rc == -1, "evaluation returned %lld", (long long)rc);
    CHECK(memcmp(before, regrets, sizeof before) == 0, "evaluation changed the regrets");
    double mean = 0;
    for (int64_t i = 0; i < DEALS; i++) mean += root[2 * i] / DEALS;
    CHECK(mean > 0 && mean < 0.5, "position 0's sampled value %.3f (this game favours the bettor a little)", mean);

    /* malformed trees: refused at the first bad node, including slots that would overflow the check */
    int64_t bad_slot[N];
    memcpy(bad_slot, slot, sizeof bad_slot);
    bad_slot[2] = INT64_MAX;
    CHECK(check_tree(bad_slot, SLOTS) == 2, "a slot near INT64_MAX passed the check");
    bad_slot[2] = SLOTS - B * A + 1;
    CHECK(check_tree(bad_slot, SLOTS) == 2, "a block past the last slot passed the check");
    bad_slot[2] = -1;
    CHECK(check_tree(bad_slot, SLOTS) == 2, "a negative slot passed the check");
    CHECK(check_tree(slot, -1) == -2, "negative n_slots");
    CHECK(iterate(bad_slot, DEALS, buckets, outcome, weight, regrets, sums, 0, 1, NULL) == -3, "a bad tree ran");

    /* malformed deals: the first bad one is named and nothing runs */
    memcpy(before, regrets, sizeof before);
    buckets[2 * 5 + 1] = B;
    CHECK(iterate(slot, DEALS, buckets, outcome, weight, regrets, sums, 0, 1, NULL) == 5, "a bucket past the last");
    buckets[2 * 5 + 1] = -1;
    CHECK(iterate(slot, DEALS, buckets, outcome, weight, regrets, sums, 0, 1, NULL) == 5, "a negative bucket");
    buckets[2 * 5 + 1] = 0;
    outcome[9] = 2;
    CHECK(iterate(slot, DEALS, buckets, outcome, weight, regrets, sums, 0, 1, NULL) == 9, "an outcome of 2");
    outcome[9] = 1;
    weight[11] = -1.0f;
    CHECK(iterate(slot, DEALS, buckets, outcome, weight, regrets, sums, 0, 1, NULL) == 11, "a negative weight");
    weight[11] = NAN;
    CHECK(iterate(slot, DEALS, buckets, outcome, weight, regrets, sums, 0, 1, NULL) == 11, "a NaN weight");
    CHECK(memcmp(before, regrets, sizeof before) == 0, "a refused batch changed the regrets");
    CHECK(iterate(slot, DEALS, buckets, outcome, weight, regrets, sums, 9, 1, NULL) == -2, "mode 9 ran");

    free(buckets), free(outcome), free(weight), free(regrets), free(sums), free(root);
    if (failures) {
        printf("mccfr: %d checks failed\n", failures);
        return 1;
    }
    printf("mccfr: all checks passed\n");
    return 0;
}
