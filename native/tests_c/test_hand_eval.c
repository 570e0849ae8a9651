/* C-level checks of the hand evaluator, meant to run under AddressSanitizer +
 * UndefinedBehaviorSanitizer (tests/native/test_c_sanitizers.py) or valgrind:
 *
 *   gcc -std=c11 -O1 -g -pthread -fsanitize=address,undefined -fno-sanitize-recover=all \
 *       -Inative/src native/tests_c/test_hand_eval.c native/src/hand_eval.c native/src/abi.c \
 *       -o /tmp/test_hand_eval
 *   /tmp/test_hand_eval            # everything, including the 133M-hand enumerations
 *   /tmp/test_hand_eval --quick    # skips the 7-card enumerations (for valgrind)
 *
 * Exit status 0 when every check passes; each failure is printed.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

#define CHECK_SEED UINT64_C(0x9E3779B97F4A7C15)
#include "check.h"

/* n distinct random cards. */
static void random_hand(uint8_t *cards, int n) {
    uint64_t taken = 0;
    for (int i = 0; i < n;) {
        int c = (int)(next_random() % 52);
        if (taken >> c & 1) continue;
        taken |= UINT64_C(1) << c;
        cards[i++] = (uint8_t)c;
    }
}

static void *init_from_thread(void *arg) {
    *(int *)arg = ds_eval_init();
    return NULL;
}

static void check_init(void) {
    pthread_t threads[4];
    int rc[4];
    for (int i = 0; i < 4; i++) pthread_create(&threads[i], NULL, init_from_thread, &rc[i]);
    for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < 4; i++) CHECK(rc[i] == 0, "thread %d: ds_eval_init() = %d", i, rc[i]);
    CHECK(ds_eval_init() == 0, "second ds_eval_init() call failed");
    int32_t size = ds_eval_nonflush_table_size();
    CHECK(size >= 76154 && size <= 96 * 1024, "non-flush table size %d", size);
}

static const uint64_t FIVE_CARD_COUNTS[9] = {1302540, 1098240, 123552, 54912, 10200,
                                             5108,    3744,    624,    40};
static const uint64_t SEVEN_CARD_COUNTS[9] = {23294460, 58627800, 31433400, 6461620, 6180020,
                                              4047644,  3473184,  224848,   41584};

/* All 2,598,960 five-card hands through ds_eval_cards, and ds_eval_batch on the same rows. */
static void check_five_card_hands(void) {
    enum { N = 2598960 };
    uint8_t *rows = malloc((size_t)N * 5);
    uint16_t *batch = malloc((size_t)N * sizeof *batch);
    uint64_t counts[9] = {0};
    uint64_t *seen = calloc(65536 / 64, sizeof *seen);
    if (!rows || !batch || !seen) {
        CHECK(0, "out of memory");
        return;
    }
    int64_t h = 0;
    for (int a = 0; a < 52; a++)
        for (int b = a + 1; b < 52; b++)
            for (int c = b + 1; c < 52; c++)
                for (int d = c + 1; d < 52; d++)
                    for (int e = d + 1; e < 52; e++) {
                        uint8_t *r = rows + 5 * h++;
                        r[0] = (uint8_t)a, r[1] = (uint8_t)b, r[2] = (uint8_t)c;
                        r[3] = (uint8_t)d, r[4] = (uint8_t)e;
                        uint16_t v = ds_eval_cards(r, 5);
                        counts[v >> 12]++;
                        seen[v >> 6] |= UINT64_C(1) << (v & 63);
                    }
    CHECK(h == N, "enumerated %lld five-card hands", (long long)h);
    for (int cat = 0; cat < 9; cat++)
        CHECK(counts[cat] == FIVE_CARD_COUNTS[cat], "category %d: %llu five-card hands", cat,
              (unsigned long long)counts[cat]);
    int distinct = 0;
    for (int i = 0; i < 65536 / 64; i++) distinct += __builtin_popcountll(seen[i]);
    CHECK(distinct == 7462, "%d distinct five-card values", distinct);
    uint64_t *enum_seen = calloc(1024, sizeof *enum_seen);
    if (enum_seen) {
        CHECK(ds_enumerate_value_set(5, enum_seen) == 0, "ds_enumerate_value_set(5)");
        CHECK(memcmp(enum_seen, seen, 1024 * sizeof *seen) == 0, "enumerated 5-card value set");
        CHECK(ds_enumerate_value_set(8, enum_seen) == -1, "ds_enumerate_value_set(8)");
        free(enum_seen);
    }
    uint64_t enum_counts[9];
    CHECK(ds_enumerate_category_counts(5, enum_counts) == 0, "ds_enumerate_category_counts(5)");
    CHECK(memcmp(enum_counts, FIVE_CARD_COUNTS, sizeof enum_counts) == 0, "enumerated 5-card counts");

    int64_t bad = ds_eval_batch(rows, N, 5, batch);
    CHECK(bad == -1, "ds_eval_batch on all five-card hands returned %lld", (long long)bad);
    for (int64_t i = 0; i < N; i++)
        if (batch[i] != ds_eval_cards(rows + 5 * i, 5)) {
            CHECK(0, "row %lld: batch %u != single", (long long)i, batch[i]);
            break;
        }
    free(rows);
    free(batch);
    free(seen);
}

/* Random batches of every size: checked batch == unchecked batch == one at a time. */
static void check_random_batches(void) {
    enum { N = 200000 };
    uint8_t *rows = malloc((size_t)N * 7);
    uint16_t *checked = malloc((size_t)N * sizeof *checked);
    uint16_t *unchecked = malloc((size_t)N * sizeof *unchecked);
    if (!rows || !checked || !unchecked) {
        CHECK(0, "out of memory");
        return;
    }
    for (int n = 1; n <= 7; n++) {
        for (int64_t h = 0; h < N; h++) random_hand(rows + n * h, n);
        int64_t bad = ds_eval_batch(rows, N, n, checked);
        CHECK(bad == -1, "n=%d: ds_eval_batch returned %lld on valid rows", n, (long long)bad);
        CHECK(ds_eval_batch_unchecked(rows, N, n, unchecked) == 0, "n=%d: unchecked refused", n);
        for (int64_t h = 0; h < N; h++) {
            uint16_t one = ds_eval_cards(rows + n * h, n);
            if (checked[h] != one || unchecked[h] != one) {
                CHECK(0, "n=%d row %lld: checked %u unchecked %u single %u", n, (long long)h,
                      checked[h], unchecked[h], one);
                break;
            }
            if (n < 5 && (one >> 12) >= 4 && (one >> 12) != 7 && (one >> 12) != 3) {
                CHECK(0, "n=%d row %lld: category %u impossible below 5 cards", n, (long long)h,
                      one >> 12);
                break;
            }
        }
    }
    free(rows);
    free(checked);
    free(unchecked);
}

/* Invalid rows are reported by index, rows before them are evaluated, and nothing is read
 * or written out of bounds (the sanitizers watch). */
static void check_invalid_rows(void) {
    enum { N = 1000, K = 7 };
    uint8_t rows[N * K];
    uint16_t out[N + 1];
    const uint8_t bad_cards[] = {52, 53, 63, 64, 127, 128, 200, 255};
    for (int h = 0; h < N; h++) random_hand(rows + K * h, K);

    for (size_t i = 0; i < sizeof bad_cards; i++) {
        for (int pos = 0; pos < K; pos++) {
            uint8_t copy[N * K];
            memcpy(copy, rows, sizeof copy);
            int row = (int)(next_random() % N);
            copy[K * row + pos] = bad_cards[i];
            out[N] = 0xBEEF; /* guard: never written */
            int64_t got = ds_eval_batch(copy, N, K, out);
            CHECK(got == row, "card %u at row %d pos %d: got %lld", bad_cards[i], row, pos,
                  (long long)got);
            CHECK(out[N] == 0xBEEF, "wrote past the end");
            if (row > 0)
                CHECK(out[row - 1] == ds_eval_cards(copy + K * (row - 1), K), "row before");
        }
    }
    for (int a = 0; a < K; a++)
        for (int b = a + 1; b < K; b++) {
            uint8_t copy[N * K];
            memcpy(copy, rows, sizeof copy);
            int row = (int)(next_random() % N);
            copy[K * row + b] = copy[K * row + a]; /* duplicate within the row */
            int64_t got = ds_eval_batch(copy, N, K, out);
            CHECK(got == row, "duplicate at (%d,%d) in row %d: got %lld", a, b, row, (long long)got);
        }
    /* Every card twice in a 2-card row; every card duplicated is caught. */
    for (int c = 0; c < 52; c++) {
        uint8_t pair[2] = {(uint8_t)c, (uint8_t)c};
        CHECK(ds_eval_batch(pair, 1, 2, out) == 0, "card %d twice not caught", c);
    }
    CHECK(ds_eval_batch(rows, 0, K, out) == -1, "empty batch");
    CHECK(ds_eval_batch(rows, N, 0, out) == -2, "n_cards = 0 accepted");
    CHECK(ds_eval_batch(rows, N, 8, out) == -2, "n_cards = 8 accepted");
    CHECK(ds_eval_batch(rows, -1, K, out) == -2, "n_hands < 0 accepted");
    CHECK(ds_eval_batch_unchecked(rows, N, 8, out) == -2, "unchecked n_cards = 8 accepted");

    /* Garbage through the unchecked paths: any bytes must stay in bounds. */
    for (int n = 1; n <= 7; n++) {
        uint8_t junk[N * 7];
        for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)next_random();
        for (int h = 0; h < 50; h++) /* some rows of one repeated card */
            memset(junk + n * h, junk[n * h], (size_t)n);
        CHECK(ds_eval_batch_unchecked(junk, N, n, out) == 0, "unchecked junk, n=%d", n);
        uint16_t sink = 0;
        for (int h = 0; h < N; h++) sink ^= ds_eval_cards(junk + n * h, n);
        (void)sink;
    }
}

/* Small hands (Leduc hold'em uses 2 cards): order by multiplicities, then kickers. */
static void check_small_hands(void) {
    /* card = 4 * rank + suit */
    const uint8_t kk[2] = {44, 45}, ak[2] = {48, 44}, aq[2] = {48, 40}, k2[2] = {44, 0};
    const uint8_t kk_aqj[5] = {44, 45, 48, 40, 36}, kk3[3] = {44, 45, 48};
    const uint8_t deuces[2] = {0, 1};
    CHECK(ds_eval_cards(deuces, 2) > ds_eval_cards(ak, 2), "22 must beat AK");
    CHECK(ds_eval_cards(kk, 2) > ds_eval_cards(deuces, 2), "KK must beat 22");
    CHECK(ds_eval_cards(ak, 2) > ds_eval_cards(aq, 2), "AK must beat AQ");
    CHECK(ds_eval_cards(aq, 2) > ds_eval_cards(k2, 2), "AQ must beat K2");
    CHECK(ds_eval_cards(kk_aqj, 5) > ds_eval_cards(kk3, 3), "KK AQJ must beat KK A");
    CHECK(ds_eval_cards(kk3, 3) > ds_eval_cards(kk, 2), "KK A must beat KK");
    const uint8_t ace[1] = {48}, king[1] = {47};
    CHECK(ds_eval_cards(ace, 1) > ds_eval_cards(king, 1), "A must beat K");
    CHECK((ds_eval_cards(ace, 1) >> 12) == 0, "one card is a high card");
}

static void check_seven_card_enumeration(void) {
    uint64_t counts[9];
    ds_enumerate7_category_counts(counts);
    for (int cat = 0; cat < 9; cat++)
        CHECK(counts[cat] == SEVEN_CARD_COUNTS[cat], "category %d: %llu seven-card hands", cat,
              (unsigned long long)counts[cat]);
    uint64_t sum = ds_enumerate7_checksum();
    CHECK(sum == UINT64_C(1034405072944), "7-card checksum %llu", (unsigned long long)sum);
}

int main(int argc, char **argv) {
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    check_init();
    check_small_hands();
    check_invalid_rows();
    check_random_batches();
    check_five_card_hands();
    if (!quick) check_seven_card_enumeration();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("hand evaluator C checks passed%s\n", quick ? " (quick)" : "");
    return 0;
}
