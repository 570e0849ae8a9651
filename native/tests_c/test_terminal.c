/* C-level checks of the terminal-value kernels (terminal.c), meant to run under
 * AddressSanitizer + UndefinedBehaviorSanitizer (tests/native/test_c_sanitizers.py) or valgrind:
 *
 *   gcc -std=c11 -O1 -g -pthread -fsanitize=address,undefined -fno-sanitize-recover=all \
 *       -Inative/src native/tests_c/test_terminal.c native/src/[a-z]*.c -o /tmp/test_terminal -lm
 *   /tmp/test_terminal            # everything
 *   /tmp/test_terminal --quick    # fewer random boards (for valgrind)
 *
 * Every fast path is compared with a slow, obviously correct O(H^2) reference computed here
 * in double precision from ds_eval_cards.  Exit status 0 when every check passes.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

#define CHECK_SEED UINT64_C(0x2545F4914F6CDD1D)
#include "check.h"

static void random_cards(uint8_t *cards, int n, const uint8_t *deck, int n_deck) {
    uint64_t taken = 0;
    for (int i = 0; i < n;) {
        const uint8_t c = deck[next_random() % (uint64_t)n_deck];
        if (taken >> c & 1) continue;
        taken |= UINT64_C(1) << c;
        cards[i++] = c;
    }
}

enum { MAX_H = 1326 };

typedef struct {
    int H, k;
    uint8_t cards[MAX_H * 2];
} Hands;

/* All k-card hands of the deck, lower card first. */
static void make_hands(Hands *hs, int k, const uint8_t *deck, int n_deck) {
    hs->k = k;
    hs->H = 0;
    for (int i = 0; i < n_deck; i++) {
        if (k == 1) {
            hs->cards[hs->H++] = deck[i];
            continue;
        }
        for (int j = i + 1; j < n_deck; j++) {
            const uint8_t a = deck[i] < deck[j] ? deck[i] : deck[j];
            const uint8_t b = deck[i] < deck[j] ? deck[j] : deck[i];
            hs->cards[2 * hs->H] = a;
            hs->cards[2 * hs->H + 1] = b;
            hs->H++;
        }
    }
}

static int shares(const uint8_t *x, int nx, const uint8_t *y, int ny) {
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < ny; j++)
            if (x[i] == y[j]) return 1;
    return 0;
}

/* Reference strengths (-1 blocked), showdown and fold masses in double. */
static void reference(const Hands *hs, const uint8_t *board, int nb, const float *r, int32_t *s,
                      double *sd, double *fold) {
    for (int h = 0; h < hs->H; h++) {
        const uint8_t *c = hs->cards + h * hs->k;
        if (shares(c, hs->k, board, nb)) {
            s[h] = -1;
            continue;
        }
        uint8_t all[8];
        memcpy(all, c, (size_t)hs->k);
        memcpy(all + hs->k, board, (size_t)nb);
        s[h] = ds_eval_cards(all, hs->k + nb);
    }
    for (int h = 0; h < hs->H; h++) {
        sd[h] = fold[h] = 0.0;
        if (s[h] < 0) continue;
        for (int g = 0; g < hs->H; g++) {
            if (s[g] < 0 || shares(hs->cards + h * hs->k, hs->k, hs->cards + g * hs->k, hs->k)) continue;
            fold[h] += r[g];
            sd[h] += r[g] * (double)((s[h] > s[g]) - (s[h] < s[g]));
        }
    }
}

static double max_abs(const float *x, int n) {
    double m = 0;
    for (int i = 0; i < n; i++) m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

static void random_reach(float *r, int H) {
    for (int h = 0; h < H; h++) {
        const uint64_t u = next_random();
        r[h] = (u & 3) == 0 ? 0.0f : (float)((u >> 11) % 1000) / 1000.0f; /* a quarter zeros */
    }
}

/* One board: ranking, table, every kernel on several rows, against the reference. */
static void check_board(const Hands *hs, const uint8_t *board, int nb, int n_rows) {
    const int H = hs->H, k = hs->k;
    const int32_t words = ds_table_words(H);
    int32_t *strength = malloc(H * sizeof *strength), *order = malloc(H * sizeof *order);
    int32_t *ref_s = malloc(H * sizeof *ref_s);
    uint32_t *table = malloc((size_t)words * sizeof *table), *table2 = malloc((size_t)words * sizeof *table2);
    float *reach = malloc((size_t)n_rows * H * sizeof *reach), *out = malloc((size_t)n_rows * H * sizeof *out);
    float *out2 = malloc((size_t)n_rows * H * sizeof *out2), *scale = malloc((size_t)n_rows * sizeof *scale);
    double *sd = malloc(H * sizeof *sd), *fold = malloc(H * sizeof *fold);
    uint8_t *valid = malloc((size_t)H);
    int32_t *rows = malloc((size_t)n_rows * sizeof *rows);

    const int nv = ds_board_rank(H, k, hs->cards, board, nb, strength, order, table);
    CHECK(nv >= 0, "ds_board_rank returned %d", nv);
    random_reach(reach, H);
    reference(hs, board, nb, reach, ref_s, sd, fold);
    int n_valid = 0;
    for (int h = 0; h < H; h++) {
        n_valid += ref_s[h] >= 0;
        valid[h] = ref_s[h] >= 0;
        if (strength[h] != ref_s[h]) {
            CHECK(0, "hand %d: strength %d, reference %d", h, strength[h], ref_s[h]);
            break;
        }
    }
    CHECK(nv == n_valid, "%d valid hands, reference %d", nv, n_valid);
    for (int i = 0; i + 1 < H; i++)
        if (strength[order[i]] > strength[order[i + 1]]) {
            CHECK(0, "order not ascending at %d", i);
            break;
        }
    CHECK(ds_table_pack(H, k, hs->cards, strength, order, table2) == nv, "ds_table_pack");

    /* rows: the first on the reference reach, the others random; all on board 0 */
    for (int i = 1; i < n_rows; i++) random_reach(reach + (size_t)i * H, H);
    for (int i = 0; i < n_rows; i++) {
        rows[i] = 0;
        scale[i] = (float)(i + 1) * 0.5f;
    }
    double tol = 1e-5 * (1.0 + H);
    CHECK(ds_showdown_rows_packed(H, 1, table, 1, rows, reach, NULL, out) == -1, "showdown packed");
    for (int h = 0; h < H; h++)
        if (fabs(out[h] - sd[h]) > tol) {
            CHECK(0, "hand %d: showdown %g, reference %g", h, out[h], sd[h]);
            break;
        }
    CHECK(ds_fold_rows_packed(H, 1, table, 1, rows, reach, NULL, out) == -1, "fold packed");
    for (int h = 0; h < H; h++)
        if (fabs(out[h] - fold[h]) > tol) {
            CHECK(0, "hand %d: fold %g, reference %g", h, out[h], fold[h]);
            break;
        }
    /* batched (lanes) == one row at a time, scaled; generic APIs == packed */
    for (int pass = 0; pass < 2; pass++) {
        int64_t (*packed)(int, int, const uint32_t *, int64_t, const int32_t *, const float *, const float *, float *) =
            pass ? ds_fold_rows_packed : ds_showdown_rows_packed;
        CHECK(packed(H, 1, table, n_rows, rows, reach, scale, out) == -1, "batch");
        for (int i = 0; i < n_rows; i++)
            packed(H, 1, table2, 1, rows, reach + (size_t)i * H, scale + i, out2 + (size_t)i * H);
        double diff = 0;
        for (int i = 0; i < n_rows * H; i++) diff = fmax(diff, fabs(out[i] - out2[i]));
        CHECK(diff <= 1e-6 * (1 + max_abs(out2, n_rows * H)), "pass %d: batch vs rows differ by %g", pass, diff);
        if (pass == 0)
            CHECK(ds_showdown_rows(H, k, hs->cards, 1, strength, order, n_rows, rows, reach, scale, out2) == -1, "generic");
        else
            CHECK(ds_fold_rows(H, k, hs->cards, 1, valid, n_rows, rows, reach, scale, out2) == -1, "generic fold");
        diff = 0;
        for (int i = 0; i < n_rows * H; i++) diff = fmax(diff, fabs(out[i] - out2[i]));
        CHECK(diff <= 1e-5 * (1 + max_abs(out2, n_rows * H)), "pass %d: generic vs packed differ by %g", pass, diff);
    }
    /* blocked hands are exactly 0 */
    for (int h = 0; h < H; h++)
        if (!valid[h] && out[h] != 0.0f) {
            CHECK(0, "blocked hand %d: %g", h, out[h]);
            break;
        }
    free(strength), free(order), free(ref_s), free(table), free(table2), free(reach), free(out);
    free(out2), free(scale), free(sd), free(fold), free(valid), free(rows);
}

/* Bad inputs are refused with the documented codes and nothing is written. */
static void check_errors(const Hands *hs) {
    const int H = hs->H, k = hs->k;
    uint32_t *table = malloc((size_t)ds_table_words(H) * sizeof *table);
    int32_t *strength = malloc(H * sizeof *strength), *order = malloc(H * sizeof *order);
    float *reach = calloc((size_t)H * 3, sizeof *reach), *out = malloc((size_t)H * 3 * sizeof *out);
    const uint8_t board[5] = {0, 5, 10, 15, 20}, dup[5] = {0, 5, 10, 15, 0}, high[5] = {0, 5, 10, 15, 52};
    CHECK(ds_board_rank(H, k, hs->cards, board, 5, strength, order, table) >= 0, "good board");
    CHECK(ds_board_rank(H, k, hs->cards, dup, 5, strength, order, table) == -5, "duplicate board card");
    CHECK(ds_board_rank(H, k, hs->cards, high, 5, strength, order, table) == -5, "board card 52");
    CHECK(ds_board_rank(H, 3, hs->cards, board, 5, strength, order, table) == -2, "k = 3");
    CHECK(ds_board_rank(0, k, hs->cards, board, 5, strength, order, table) == -2, "H = 0");
    CHECK(ds_board_rank(H, k, hs->cards, board, 8 - k, strength, order, table) == -2, "too many cards");
    CHECK(ds_board_rank(H, k, hs->cards, board, 5, NULL, NULL, table) >= 0, "NULL strength/order");

    for (int i = 0; i < 3 * H; i++) out[i] = 7.0f;
    const int32_t rows_bad[3] = {0, 1, 0}, rows_neg[3] = {0, 0, -1}, rows_ok[3] = {0, 0, 0};
    CHECK(ds_showdown_rows_packed(H, 1, table, 3, rows_bad, reach, NULL, out) == 1, "row board 1 of 1");
    CHECK(ds_fold_rows_packed(H, 1, table, 3, rows_neg, reach, NULL, out) == 2, "row board -1");
    CHECK(out[0] == 7.0f && out[3 * H - 1] == 7.0f, "nothing written on a bad row");
    CHECK(ds_showdown_rows_packed(H, 1, table, -1, rows_ok, reach, NULL, out) == -2, "R < 0");
    CHECK(ds_showdown_rows_packed(H + 1 <= 1326 ? H + 1 : H - 1, 1, table, 3, rows_ok, reach, NULL, out) == -4,
          "table of another H");
    CHECK(ds_showdown_rows_packed(H, 1, table, 0, rows_ok, reach, NULL, out) == -1, "no rows");

    /* generic entry point: order not a permutation / not sorted / blocked not first */
    CHECK(ds_board_rank(H, k, hs->cards, board, 5, strength, order, table) >= 0, "rank again");
    int32_t *bad = malloc(H * sizeof *bad);
    memcpy(bad, order, H * sizeof *bad);
    bad[H - 1] = bad[0];
    CHECK(ds_table_pack(H, k, hs->cards, strength, bad, table) == -4, "order repeats a hand");
    memcpy(bad, order, H * sizeof *bad);
    bad[H - 1] = H;
    CHECK(ds_showdown_rows(H, k, hs->cards, 1, strength, bad, 1, rows_ok, reach, NULL, out) == -4, "order out of range");
    memcpy(bad, order, H * sizeof *bad);
    const int32_t t = bad[H - 1];
    bad[H - 1] = bad[H - 2];
    bad[H - 2] = t;
    if (strength[bad[H - 1]] != strength[bad[H - 2]])
        CHECK(ds_table_pack(H, k, hs->cards, strength, bad, table) == -4, "order not ascending");
    free(bad);

    uint8_t *cards = malloc((size_t)H * k);
    memcpy(cards, hs->cards, (size_t)H * k);
    cards[k * (H / 2)] = 60;
    CHECK(ds_board_rank(H, k, cards, board, 5, strength, order, table) == -3, "hand card 60");
    CHECK(ds_hand_list_check(H, k, cards) == H / 2, "hand list check: card 60");
    memcpy(cards, hs->cards, (size_t)H * k);
    if (k == 2) {
        cards[2 * 7 + 1] = cards[2 * 7];
        CHECK(ds_hand_list_check(H, k, cards) == 7, "hand list check: repeated card");
        memcpy(cards, hs->cards, (size_t)H * k);
    }
    cards[k * (H - 1)] = hs->cards[0];
    if (k == 2) cards[k * (H - 1) + 1] = hs->cards[1];
    CHECK(ds_hand_list_check(H, k, cards) == H - 1, "hand list check: repeated hand");
    CHECK(ds_hand_list_check(H, k, hs->cards) == -1, "hand list check: good list");
    free(cards);
    free(table), free(strength), free(order), free(reach), free(out);
}

/* Chance average: ds_showdown_avg_rows == sum of the river showdowns, scaled. */
static void check_average(const Hands *hs, const uint8_t *deck, int n_deck) {
    const int H = hs->H, k = hs->k;
    uint8_t turn[4];
    random_cards(turn, 4, deck, n_deck);
    const size_t words = (size_t)ds_table_words(H);
    uint32_t *tables = malloc(52 * words * sizeof *tables);
    int32_t starts[2] = {0, 0}, members[52];
    for (int i = 0; i < n_deck; i++) {
        if (shares(&deck[i], 1, turn, 4)) continue;
        uint8_t river[5];
        memcpy(river, turn, 4);
        river[4] = deck[i];
        CHECK(ds_board_rank(H, k, hs->cards, river, 5, NULL, NULL, tables + starts[1] * words) >= 0, "river");
        members[starts[1]] = starts[1];
        starts[1]++;
    }
    float *reach = malloc(2 * (size_t)H * sizeof *reach), *out = malloc(2 * (size_t)H * sizeof *out);
    float *one = malloc((size_t)H * sizeof *one);
    double *sum = calloc((size_t)H, sizeof *sum);
    random_reach(reach, H);
    memcpy(reach + H, reach, H * sizeof *reach);
    const int32_t groups[2] = {0, 0};
    const float scale[2] = {1.0f / 44.0f, 2.0f};
    CHECK(ds_showdown_avg_rows(H, starts[1], tables, 1, starts, members, 2, groups, reach, scale, out) == -1, "avg");
    for (int b = 0; b < starts[1]; b++) {
        const int32_t zero = 0;
        ds_showdown_rows_packed(H, 1, tables + b * words, 1, &zero, reach, NULL, one);
        for (int h = 0; h < H; h++) sum[h] += one[h];
    }
    double diff = 0, big = 0;
    for (int h = 0; h < H; h++) {
        diff = fmax(diff, fabs(out[h] - sum[h] / 44.0));
        diff = fmax(diff, fabs(out[H + h] - 2.0 * sum[h]) / 88.0);
        big = fmax(big, fabs(sum[h]));
    }
    CHECK(diff <= 1e-5 * (1 + big), "average differs by %g", diff);
    const int32_t bad_group[2] = {0, 1};
    CHECK(ds_showdown_avg_rows(H, starts[1], tables, 1, starts, members, 2, bad_group, reach, scale, out) == 1,
          "bad group");
    free(tables), free(reach), free(out), free(one), free(sum);
}

/* Runout equities on a small deck against a brute force over (hand, opponent, runout). */
static void check_equity(int k) {
    const uint8_t deck[12] = {0, 1, 2, 4, 5, 8, 9, 12, 13, 16, 17, 20}; /* 12 cards */
    Hands hs;
    make_hands(&hs, k, deck, 12);
    const int H = hs.H, final_board = 3;
    const uint8_t board[1] = {deck[3]};
    float *reach = malloc(H * sizeof *reach);
    random_reach(reach, H);
    const int n_rem = 11;
    double *num = malloc((size_t)n_rem * H * sizeof *num), *den = malloc((size_t)n_rem * H * sizeof *den);
    double *num1 = malloc(H * sizeof *num1), *den1 = malloc(H * sizeof *den1);
    CHECK(ds_runout_equity(H, k, hs.cards, board, 1, deck, 12, final_board - 1, 0, reach, num1, den1) == 0, "eq");
    CHECK(ds_runout_equity(H, k, hs.cards, board, 1, deck, 12, final_board - 1, 1, reach, num, den) == 0, "eq/card");
    for (int h = 0; h < H; h++) {
        const uint8_t *c = hs.cards + h * k;
        double bn = 0, bd = 0, tn = 0, td = 0;
        for (int i = 0; i < 12; i++)
            for (int j = i + 1; j < 12; j++) {
                if (deck[i] == board[0] || deck[j] == board[0]) continue;
                const uint8_t run[3] = {board[0], deck[i], deck[j]};
                if (shares(c, k, run, 3)) continue;
                uint8_t mine[5];
                memcpy(mine, c, (size_t)k);
                memcpy(mine + k, run, 3);
                const int vm = ds_eval_cards(mine, k + 3);
                for (int g = 0; g < H; g++) {
                    const uint8_t *o = hs.cards + g * k;
                    if (reach[g] == 0 || shares(o, k, run, 3) || shares(o, k, c, k)) continue;
                    uint8_t theirs[5];
                    memcpy(theirs, o, (size_t)k);
                    memcpy(theirs + k, run, 3);
                    const int vt = ds_eval_cards(theirs, k + 3);
                    bn += reach[g] * (2.0 * (vm > vt) + (vm == vt));
                    bd += reach[g];
                }
            }
        CHECK(fabs(num1[h] - bn) <= 1e-4 * (1 + bn) && fabs(den1[h] - bd) <= 1e-4 * (1 + bd),
              "k=%d hand %d: %g/%g vs brute %g/%g", k, h, num1[h], den1[h], bn, bd);
        for (int p = 0; p < n_rem; p++) {
            tn += num[(size_t)p * H + h];
            td += den[(size_t)p * H + h];
        }
        /* each 2-card runout lands in the rows of both its cards */
        CHECK(fabs(tn - 2 * bn) <= 1e-4 * (1 + bn) && fabs(td - 2 * bd) <= 1e-4 * (1 + bd),
              "k=%d hand %d per card: %g/%g vs %g/%g", k, h, tn, td, 2 * bn, 2 * bd);
        if (failures > 20) break;
    }
    const uint8_t bad_deck[3] = {1, 1, 2};
    CHECK(ds_runout_equity(H, k, hs.cards, board, 1, bad_deck, 3, 1, 0, reach, num1, den1) == -6, "bad deck");
    CHECK(ds_runout_equity(H, k, hs.cards, board, 1, deck, 12, 20, 0, reach, num1, den1) == -2, "too many draws");
    CHECK(ds_runout_equity(H, k, hs.cards, board, 1, deck, 12, 0, 1, reach, num1, den1) == -2, "per card, no draw");
    free(reach), free(num), free(den), free(num1), free(den1);
}

int main(int argc, char **argv) {
    const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    CHECK(ds_eval_init() == 0, "ds_eval_init");
    uint8_t deck52[52];
    for (int i = 0; i < 52; i++) deck52[i] = (uint8_t)i;
    static Hands holdem, singles, leduc;
    make_hands(&holdem, 2, deck52, 52);
    make_hands(&singles, 1, deck52, 52);
    const uint8_t leduc_deck[6] = {36, 37, 40, 41, 44, 45}; /* J Q K, two suits */
    make_hands(&leduc, 1, leduc_deck, 6);
    CHECK(holdem.H == 1326 && singles.H == 52 && leduc.H == 6, "hand lists");

    const int n_boards = quick ? 4 : 30;
    for (int i = 0; i < n_boards; i++) {
        uint8_t board[5];
        const int nb = 3 + i % 3; /* flop, turn, river strengths */
        random_cards(board, nb, deck52, 52);
        check_board(&holdem, board, nb, 1 + (i * 5) % 19);
        random_cards(board, 5, deck52, 52);
        check_board(&singles, board, i % 6, 1 + i % 11);
    }
    for (int i = 0; i < 6; i++) {
        const uint8_t board[1] = {leduc_deck[i]};
        check_board(&leduc, board, 1, 1 + i);
    }
    {   /* a board where everything ties (royal flush on the board) */
        const uint8_t royal[5] = {32 + 3, 36 + 3, 40 + 3, 44 + 3, 48 + 3};
        check_board(&holdem, royal, 5, 9);
    }
    check_errors(&holdem);
    check_errors(&singles);
    check_average(&holdem, deck52, 52);
    check_equity(1);
    check_equity(2);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("terminal C checks passed%s\n", quick ? " (quick)" : "");
    return 0;
}
