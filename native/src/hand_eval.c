/* Poker hand evaluator for hands of 1..7 cards.
 *
 * Value of a hand: a uint16_t, higher = better, equal = tie, comparable across hands of
 * any size from 1 to 7 cards.  Layout: category << 12 | index, where the category is
 * 0 high card, 1 pair, 2 two pair, 3 trips, 4 straight, 5 flush, 6 full house, 7 quads,
 * 8 straight flush, and the index is dense (0, 1, 2, ...) within the category over every
 * hand class that some hand of 1..7 cards can have.
 *
 * What a hand is worth:
 *   - 5..7 cards: its best five cards, with the usual poker order (A-2-3-4-5 is the lowest
 *     straight and straight flush).
 *   - 1..4 cards (Leduc hold'em and friends): no straights or flushes; the category comes
 *     from the rank multiplicities, then the kickers present are compared highest first,
 *     and a missing kicker counts lower than any present one (the ACPC dealer compares
 *     rank bit masks, which is the same order).  So a pair of kings with three kickers
 *     beats a bare pair of kings, and any pair beats any unpaired hand.
 *
 * How it is fast (all tables are built by ds_eval_init(), nothing is read from disk):
 *
 *   Each card is one 64-bit word, and a hand is the sum of its cards' words:
 *     bits  0..27  sum of the hashed rank keys (see below; each < 2^25, 7 of them < 2^28)
 *     bits 32..47  four 4-bit suit counters, the sum starts them at 3, so bit 3 of a
 *                  counter is set exactly when the hand holds >= 5 cards of that suit:
 *                  one AND with FLUSH_TEST tells whether the hand is a flush.
 *     bits 56..59  number of invalid cards (card >= 52), only for input validation.
 *
 *   Rank keys: RANK_KEY[r] is chosen so that the sum over any multiset of at most 7 ranks
 *   (each rank at most 4 times) is unique.  Uniqueness makes the sum a perfect key of the
 *   rank multiset, so the non-flush value of every hand is one table lookup.
 *
 *   Compact perfect hash: the key sums lie below 2^25 but there are only 76,154 of them.
 *   Multiplying by an odd constant modulo 2^25 is a bijection, so we store in each card's
 *   word RANK_KEY[r] * HASH_MUL mod 2^25 instead of RANK_KEY[r]; the low 25 bits of the
 *   sum are then (key sum) * HASH_MUL mod 2^25, still unique per multiset, and scrambled.
 *   Their top 14 bits choose a row, the low 11 bits a column; the 16384 rows are packed
 *   into one short table by first-fit-decreasing row displacement (Tarjan & Yao), and a
 *   per-row offset maps (row, column) to the slot.  Lookup: h = sum & (2^25-1);
 *   value = NONFLUSH[h + ROW_OFF[h >> 11]]: two loads, from a 64 KiB offset table and a
 *   ~156 KiB value table (~98% full), both comfortably inside L2.
 *
 *   Flushes: with at most 7 cards, a hand with >= 5 cards of one suit cannot also hold a
 *   full house or quads, so its value is that of its flush suit alone: FLUSH[13-bit rank
 *   mask of that suit] (8192 entries).  Each card word has a companion bit
 *   1 << (16 * suit + rank), and the OR of those gives every suit's rank mask.
 *
 *   Enumeration of all 7-card hands runs seven nested loops that add one card word per
 *   level, so the innermost loop costs one add and one lookup per hand.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

#if defined(__GNUC__)
#define DS_INLINE static inline __attribute__((always_inline))
#define DS_ALIGN64 __attribute__((aligned(64)))
#define DS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define DS_INLINE static inline
#define DS_ALIGN64
#define DS_UNLIKELY(x) (x)
#endif

enum {
    CAT_HIGH_CARD = 0,
    CAT_PAIR,
    CAT_TWO_PAIR,
    CAT_TRIPS,
    CAT_STRAIGHT,
    CAT_FLUSH,
    CAT_FULL_HOUSE,
    CAT_QUADS,
    CAT_STRAIGHT_FLUSH,
    N_CATS
};

#define N_RANKS 13
#define N_CARDS 52
#define MAX_HAND 7

/* Rank keys, deuce first.  Found by our own greedy search (tests/native/test_evaluator.py
 * re-derives them): RANK_KEY[0] = 1, and each next key is the smallest integer above the
 * previous one such that all multisets of at most 7 cards (at most 4 per rank) over the
 * ranks so far still have pairwise different key sums.  Largest 7-card sum:
 * 4 * 3453520 + 3 * 1526359 = 18,393,157 < 2^25. */
static const uint32_t RANK_KEY[N_RANKS] = {
    1, 5, 24, 112, 521, 2247, 9244, 30823, 103066, 250154, 667453, 1526359, 3453520,
};

#define KEY_BITS 25
#define KEY_MASK ((UINT32_C(1) << KEY_BITS) - 1)
/* Odd, so multiplication is a bijection mod 2^25 (2^32 / golden ratio).  Any odd constant
 * is correct; the packed table length varies by under 1% across the ones we tried. */
#define HASH_MUL UINT32_C(0x9E3779B1)
#define COL_BITS 11
#define N_COLS (1u << COL_BITS)
#define N_ROWS (1u << (KEY_BITS - COL_BITS))
#define NONFLUSH_CAP (96u * 1024u) /* slots; the packed table needs ~78k */
/* The search for a row's base starts this far below where the previous row of the same
 * size went (rows of one size are about equally hard to fit), not at the first free slot:
 * that skips rescanning the densely packed start of the table for every row, which takes
 * packing from ~60 ms to ~3 ms while the table grows by only ~2%. */
#define PACK_SLACK 1024u

#define SUIT_SHIFT 32
#define SUIT_INIT (UINT64_C(0x3333) << SUIT_SHIFT)
#define SUIT_ONE_EACH (UINT64_C(0x1111) << SUIT_SHIFT)
#define FLUSH_TEST (UINT64_C(0x8888) << SUIT_SHIFT)
#define INVALID_CARD (UINT64_C(1) << 56)
#define INVALID_TEST (UINT64_C(0xFF) << 56)

/* Per card byte (256 entries, so any byte is a safe index): the hashed rank key plus the
 * suit counter increment (INVALID_CARD for bytes >= 52), and the bit 1 << (16*suit + rank)
 * (0 for invalid bytes).  Two plain arrays rather than an array of pairs, so that x86 can
 * index them with a scaled address and no extra shift. */
static uint64_t CARD_KEY[256] DS_ALIGN64;
static uint64_t CARD_BIT[256] DS_ALIGN64;
static uint16_t NONFLUSH[NONFLUSH_CAP] DS_ALIGN64;
static uint32_t ROW_OFF[N_ROWS] DS_ALIGN64;
static uint16_t FLUSH[1u << N_RANKS] DS_ALIGN64;
static uint32_t nonflush_used; /* slots in use by the packed table (for reporting) */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static atomic_int init_status = 1; /* 1 not built, 0 ok, -1 failed */

/* ------------------------------------------------------------------------------------
 * Lookups
 * ---------------------------------------------------------------------------------- */

DS_INLINE uint16_t lookup_nonflush(uint64_t sum) {
    uint32_t h = (uint32_t)sum & KEY_MASK;
    return NONFLUSH[h + ROW_OFF[h >> COL_BITS]]; /* uint32 wrap-around is intended */
}

/* Value of a hand whose sum passed FLUSH_TEST; bits = OR of its cards' CARD_BIT. */
DS_INLINE uint16_t lookup_flush(uint64_t sum, uint64_t bits) {
    unsigned suit = ((unsigned)__builtin_ctzll(sum & FLUSH_TEST) - (SUIT_SHIFT + 3)) >> 2;
    return FLUSH[(bits >> (16 * suit)) & 0x1FFF];
}

DS_INLINE uint64_t flush_bits(const uint8_t *cards, int n) {
    uint64_t bits = 0;
    for (int i = 0; i < n; i++) bits |= CARD_BIT[cards[i]];
    return bits;
}

/* ------------------------------------------------------------------------------------
 * Table construction
 * ---------------------------------------------------------------------------------- */

/* A hand class as a 24-bit score that sorts like the hands: category << 20, then five
 * 4-bit slots (highest first) holding rank + 1 of the deciding ranks, 0 where absent. */
static uint32_t make_score(int cat, const int *ranks, int n) {
    uint32_t s = (uint32_t)cat << 20;
    for (int i = 0; i < n; i++) s |= (uint32_t)(ranks[i] + 1) << (16 - 4 * i);
    return s;
}

/* Top rank of the best straight in a 13-bit rank mask, 3 for the wheel, -1 if none. */
static int straight_top(unsigned mask) {
    for (int top = 12; top >= 4; top--)
        if (((mask >> (top - 4)) & 0x1F) == 0x1F) return top;
    if ((mask & 0x100F) == 0x100F) return 3; /* A-2-3-4-5 */
    return -1;
}

/* Up to k ranks of mask, highest first, appended at out; returns how many. */
static int top_ranks(unsigned mask, int k, int *out) {
    int n = 0;
    for (int r = N_RANKS - 1; r >= 0 && n < k; r--)
        if (mask & (1u << r)) out[n++] = r;
    return n;
}

static uint32_t score_flush(unsigned mask) {
    int s[5];
    int top = straight_top(mask);
    if (top >= 0) {
        s[0] = top;
        return make_score(CAT_STRAIGHT_FLUSH, s, 1);
    }
    return make_score(CAT_FLUSH, s, top_ranks(mask, 5, s));
}

/* Best non-flush hand class of a rank multiset (cnt[r] copies of rank r, <= 7 cards). */
static uint32_t score_counts(const int *cnt) {
    int quad = -1, trips[2], pairs[3], n_trips = 0, n_pairs = 0, s[5];
    unsigned present = 0;
    for (int r = N_RANKS - 1; r >= 0; r--) {
        if (cnt[r]) present |= 1u << r;
        if (cnt[r] == 4) quad = r;
        else if (cnt[r] == 3) trips[n_trips++] = r;
        else if (cnt[r] == 2) pairs[n_pairs++] = r;
    }
    if (quad >= 0) {
        s[0] = quad;
        return make_score(CAT_QUADS, s, 1 + top_ranks(present & ~(1u << quad), 1, s + 1));
    }
    if (n_trips >= 1 && n_trips + n_pairs >= 2) {
        int pair = n_pairs ? pairs[0] : -1;
        if (n_trips == 2 && trips[1] > pair) pair = trips[1];
        s[0] = trips[0];
        s[1] = pair;
        return make_score(CAT_FULL_HOUSE, s, 2);
    }
    int top = straight_top(present);
    if (top >= 0) {
        s[0] = top;
        return make_score(CAT_STRAIGHT, s, 1);
    }
    if (n_trips == 1) {
        s[0] = trips[0];
        return make_score(CAT_TRIPS, s, 1 + top_ranks(present & ~(1u << trips[0]), 2, s + 1));
    }
    if (n_pairs >= 2) {
        s[0] = pairs[0];
        s[1] = pairs[1];
        unsigned rest = present & ~(1u << pairs[0]) & ~(1u << pairs[1]);
        return make_score(CAT_TWO_PAIR, s, 2 + top_ranks(rest, 1, s + 2));
    }
    if (n_pairs == 1) {
        s[0] = pairs[0];
        return make_score(CAT_PAIR, s, 1 + top_ranks(present & ~(1u << pairs[0]), 3, s + 1));
    }
    return make_score(CAT_HIGH_CARD, s, top_ranks(present, 5, s));
}

typedef struct {
    uint32_t *keys;   /* key sum (unhashed) per multiset */
    uint32_t *scores; /* score per multiset */
    int n;
} Multisets;

static void gen_multisets(Multisets *m, int rank, int left, uint32_t key, int *cnt) {
    if (rank == N_RANKS) {
        if (left < MAX_HAND) { /* skip the empty multiset */
            m->keys[m->n] = key;
            m->scores[m->n] = score_counts(cnt);
            m->n++;
        }
        return;
    }
    for (int c = 0; c <= 4 && c <= left; c++) {
        cnt[rank] = c;
        gen_multisets(m, rank + 1, left - c, key + (uint32_t)c * RANK_KEY[rank], cnt);
    }
    cnt[rank] = 0;
}

/* LSD radix sort of 24-bit values (3 passes of 8 bits). */
static void radix_sort24(uint32_t *a, uint32_t *tmp, int n) {
    for (int shift = 0; shift < 24; shift += 8) {
        int count[257] = {0};
        for (int i = 0; i < n; i++) count[((a[i] >> shift) & 0xFF) + 1]++;
        for (int b = 0; b < 256; b++) count[b + 1] += count[b];
        for (int i = 0; i < n; i++) tmp[count[(a[i] >> shift) & 0xFF]++] = a[i];
        memcpy(a, tmp, (size_t)n * sizeof *a);
    }
}

/* Dense values for all scores: sorted unique scores, and each category's first position. */
typedef struct {
    uint32_t *uniq;
    int n_uniq;
    int first[N_CATS + 1];
} Ranking;

static int score_value(const Ranking *rk, uint32_t score, uint16_t *value) {
    int lo = 0, hi = rk->n_uniq - 1;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        if (rk->uniq[mid] < score) lo = mid + 1;
        else hi = mid;
    }
    int cat = (int)(score >> 20);
    int index = lo - rk->first[cat];
    if (rk->uniq[lo] != score || index < 0 || index >= 4096) return -1;
    *value = (uint16_t)((cat << 12) | index);
    return 0;
}

/* Pack the hashed keys into NONFLUSH / ROW_OFF by first-fit-decreasing row displacement:
 * rows from the fullest down, each at the lowest base (from its search start, see
 * PACK_SLACK) where all its columns land on free slots.  hk[i] = hashed key (< 2^25) of entry i, val[i] its value.  Returns 0, or < 0 when
 * two entries share a hashed key (the rank keys would not be unique) or there is no room. */
static int pack_rows(const uint32_t *hk, const uint16_t *val, int n) {
    int rc = -1;
    uint32_t *row_start = calloc(N_ROWS + 2, sizeof *row_start);
    uint32_t *pos = malloc(N_ROWS * sizeof *pos);
    uint32_t *by_row = malloc((size_t)n * sizeof *by_row);
    uint32_t *rows = malloc(N_ROWS * sizeof *rows);
    uint32_t *fill = calloc(N_COLS + 2, sizeof *fill);
    uint32_t *word = malloc(N_COLS * sizeof *word);
    unsigned *shift = malloc(N_COLS * sizeof *shift);
    const uint32_t n_words = NONFLUSH_CAP / 64 + 2;
    uint64_t *used = calloc(n_words, sizeof *used); /* bit set of taken slots */
    if (!row_start || !pos || !by_row || !rows || !fill || !word || !shift || !used) goto out;

    /* Group entries by row (counting sort). */
    for (int i = 0; i < n; i++) row_start[(hk[i] >> COL_BITS) + 1]++;
    for (uint32_t r = 0; r < N_ROWS; r++) {
        if (row_start[r + 1] > N_COLS) goto out; /* more keys than columns: duplicates */
        row_start[r + 1] += row_start[r];
    }
    memcpy(pos, row_start, N_ROWS * sizeof *pos);
    for (int i = 0; i < n; i++) by_row[pos[hk[i] >> COL_BITS]++] = (uint32_t)i;
    /* Rows by decreasing size, ties by row number (counting sort on the size). */
    for (uint32_t r = 0; r < N_ROWS; r++) fill[N_COLS - (row_start[r + 1] - row_start[r]) + 1]++;
    for (uint32_t s = 0; s <= N_COLS; s++) fill[s + 1] += fill[s];
    for (uint32_t r = 0; r < N_ROWS; r++)
        rows[fill[N_COLS - (row_start[r + 1] - row_start[r])]++] = r;

    uint32_t first_free = 0, top = 0, last_base[N_COLS + 1] = {0};
    for (uint32_t i = 0; i < N_ROWS; i++) {
        const uint32_t r = rows[i], b = row_start[r], m = row_start[r + 1] - b;
        if (m == 0) { /* empty row: any key landing here reads some slot < N_COLS */
            ROW_OFF[r] = 0u - (r << COL_BITS);
            continue;
        }
        uint32_t min_col = N_COLS;
        for (uint32_t j = 0; j < m; j++) {
            uint32_t c = hk[by_row[b + j]] & (N_COLS - 1);
            if (c < min_col) min_col = c;
        }
        /* Test 64 consecutive bases at once: bit t of `fit` says whether base0 + 64 k + t
         * puts every column on a free slot.  Slot base0 + 64 k + col sits in word
         * word[j] + k at bit shift[j], so the shifts are fixed for the whole row. */
        uint32_t base0 = first_free > min_col ? first_free - min_col : 0;
        if (last_base[m] > base0 + PACK_SLACK) base0 = last_base[m] - PACK_SLACK;
        for (uint32_t j = 0; j < m; j++) {
            uint32_t slot = base0 + (hk[by_row[b + j]] & (N_COLS - 1));
            word[j] = slot >> 6;
            shift[j] = slot & 63;
        }
        uint32_t base = 0;
        for (uint32_t k = 0;; k++) {
            if (base0 + 64 * k + N_COLS > NONFLUSH_CAP) goto out;
            uint64_t fit = ~UINT64_C(0);
            for (uint32_t j = 0; j < m && fit; j++) {
                const uint64_t *w = used + word[j] + k;
                fit &= ~((w[0] >> shift[j]) | ((w[1] << 1) << (63 - shift[j])));
            }
            if (fit) {
                base = base0 + 64 * k + (uint32_t)__builtin_ctzll(fit);
                break;
            }
        }
        if (base + N_COLS > NONFLUSH_CAP) goto out;
        for (uint32_t j = 0; j < m; j++) {
            uint32_t e = by_row[b + j], slot = base + (hk[e] & (N_COLS - 1));
            uint64_t bit = UINT64_C(1) << (slot & 63);
            if (used[slot >> 6] & bit) goto out; /* duplicate hashed key */
            used[slot >> 6] |= bit;
            NONFLUSH[slot] = val[e];
            if (slot + 1 > top) top = slot + 1;
        }
        ROW_OFF[r] = base - (r << COL_BITS);
        last_base[m] = base;
        while (first_free < NONFLUSH_CAP && (used[first_free >> 6] >> (first_free & 63)) & 1)
            first_free++;
    }
    nonflush_used = top;
    rc = 0;
out:
    free(row_start);
    free(pos);
    free(by_row);
    free(rows);
    free(fill);
    free(word);
    free(shift);
    free(used);
    return rc;
}

static int build_tables(void) {
    int rc = -1;
    const int max_multisets = 80000;
    const int max_scores = max_multisets + (1 << N_RANKS);
    Multisets m = {malloc(max_multisets * sizeof(uint32_t)), malloc(max_multisets * sizeof(uint32_t)), 0};
    Ranking rk = {malloc(max_scores * sizeof(uint32_t)), 0, {0}};
    uint32_t *tmp = malloc(max_scores * sizeof(uint32_t));
    uint32_t *hk = malloc(max_multisets * sizeof(uint32_t));
    uint16_t *val = malloc(max_multisets * sizeof(uint16_t));
    if (!m.keys || !m.scores || !rk.uniq || !tmp || !hk || !val) goto out;

    int cnt[N_RANKS] = {0};
    gen_multisets(&m, 0, MAX_HAND, 0, cnt);

    /* Rank every hand class: non-flush multisets and flush masks together. */
    int n = 0;
    for (int i = 0; i < m.n; i++) rk.uniq[n++] = m.scores[i];
    for (unsigned mask = 0; mask < (1u << N_RANKS); mask++)
        if (__builtin_popcount(mask) >= 5) rk.uniq[n++] = score_flush(mask);
    radix_sort24(rk.uniq, tmp, n);
    int u = 0;
    for (int i = 0; i < n; i++)
        if (u == 0 || rk.uniq[u - 1] != rk.uniq[i]) rk.uniq[u++] = rk.uniq[i];
    rk.n_uniq = u;
    for (int c = 0, i = 0; c <= N_CATS; c++) {
        while (i < u && (int)(rk.uniq[i] >> 20) < c) i++;
        rk.first[c] = i;
    }

    memset(FLUSH, 0, sizeof FLUSH);
    for (unsigned mask = 0; mask < (1u << N_RANKS); mask++)
        if (__builtin_popcount(mask) >= 5 && score_value(&rk, score_flush(mask), &FLUSH[mask]) < 0)
            goto out;
    for (int i = 0; i < m.n; i++) {
        hk[i] = (m.keys[i] * HASH_MUL) & KEY_MASK;
        if (score_value(&rk, m.scores[i], &val[i]) < 0) goto out;
    }
    memset(NONFLUSH, 0, sizeof NONFLUSH);
    if (pack_rows(hk, val, m.n) < 0) goto out;

    for (int c = 0; c < 256; c++) {
        if (c < N_CARDS) {
            int rank = c >> 2, suit = c & 3;
            CARD_KEY[c] = ((RANK_KEY[rank] * HASH_MUL) & KEY_MASK) +
                          (UINT64_C(1) << (SUIT_SHIFT + 4 * suit));
            CARD_BIT[c] = UINT64_C(1) << (16 * suit + rank);
        } else {
            CARD_KEY[c] = INVALID_CARD;
            CARD_BIT[c] = 0;
        }
    }
    rc = 0;
out:
    free(m.keys);
    free(m.scores);
    free(rk.uniq);
    free(tmp);
    free(hk);
    free(val);
    return rc;
}

static void init_once_fn(void) {
    atomic_store_explicit(&init_status, build_tables() == 0 ? 0 : -1, memory_order_release);
}

int ds_eval_init(void) {
    pthread_once(&init_once, init_once_fn);
    return atomic_load_explicit(&init_status, memory_order_acquire);
}

/* Cheap check for the entry points: the tables are built (building them if needed). */
DS_INLINE int ready(void) {
    return atomic_load_explicit(&init_status, memory_order_acquire) == 0 || ds_eval_init() == 0;
}

void ds_eval_rank_keys(uint32_t keys[13]) {
    for (int r = 0; r < N_RANKS; r++) keys[r] = RANK_KEY[r];
}

int32_t ds_eval_nonflush_table_size(void) {
    return ready() ? (int32_t)nonflush_used : -1;
}

/* ------------------------------------------------------------------------------------
 * Evaluation
 * ---------------------------------------------------------------------------------- */

DS_INLINE uint16_t eval_hand(const uint8_t *cards, int n) {
    uint64_t sum = SUIT_INIT;
    for (int i = 0; i < n; i++) sum += CARD_KEY[cards[i]];
    if (DS_UNLIKELY(sum & FLUSH_TEST)) return lookup_flush(sum, flush_bits(cards, n));
    return lookup_nonflush(sum);
}

uint16_t ds_eval_cards(const uint8_t *cards, int n) {
    if (n < 0) n = 0;
    if (n > MAX_HAND) n = MAX_HAND;
    return eval_hand(cards, n);
}

/* Rows of exactly n cards; n is a compile-time constant at each call site. */
DS_INLINE int64_t batch_checked(const uint8_t *cards, int64_t n_hands, int n, uint16_t *out) {
    for (int64_t h = 0; h < n_hands; h++, cards += n) {
        uint64_t sum = SUIT_INIT, bits = 0, bit_sum = 0;
        for (int i = 0; i < n; i++) {
            const uint64_t bit = CARD_BIT[cards[i]];
            sum += CARD_KEY[cards[i]];
            bits |= bit;
            bit_sum += bit; /* equals the OR exactly when no card repeats */
        }
        if (DS_UNLIKELY((sum & INVALID_TEST) | (bits ^ bit_sum))) return h;
        out[h] = DS_UNLIKELY(sum & FLUSH_TEST) ? lookup_flush(sum, bits) : lookup_nonflush(sum);
    }
    return -1;
}

DS_INLINE void batch_unchecked(const uint8_t *cards, int64_t n_hands, int n, uint16_t *out) {
    for (int64_t h = 0; h < n_hands; h++, cards += n) out[h] = eval_hand(cards, n);
}

int64_t ds_eval_batch(const uint8_t *cards, int64_t n_hands, int n_cards, uint16_t *out) {
    if (n_hands < 0 || n_cards < 1 || n_cards > MAX_HAND || !ready()) return -2;
    switch (n_cards) {
    case 1: return batch_checked(cards, n_hands, 1, out);
    case 2: return batch_checked(cards, n_hands, 2, out);
    case 3: return batch_checked(cards, n_hands, 3, out);
    case 4: return batch_checked(cards, n_hands, 4, out);
    case 5: return batch_checked(cards, n_hands, 5, out);
    case 6: return batch_checked(cards, n_hands, 6, out);
    default: return batch_checked(cards, n_hands, 7, out);
    }
}

int ds_eval_batch_unchecked(const uint8_t *cards, int64_t n_hands, int n_cards, uint16_t *out) {
    if (n_hands < 0 || n_cards < 1 || n_cards > MAX_HAND || !ready()) return -2;
    switch (n_cards) {
    case 1: batch_unchecked(cards, n_hands, 1, out); break;
    case 2: batch_unchecked(cards, n_hands, 2, out); break;
    case 3: batch_unchecked(cards, n_hands, 3, out); break;
    case 4: batch_unchecked(cards, n_hands, 4, out); break;
    case 5: batch_unchecked(cards, n_hands, 5, out); break;
    case 6: batch_unchecked(cards, n_hands, 6, out); break;
    default: batch_unchecked(cards, n_hands, 7, out); break;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------
 * Enumeration of all 7-card hands: nested loops, one add per level.
 * ---------------------------------------------------------------------------------- */

enum { ACC_CHECKSUM, ACC_CATEGORIES };

/* Category counts are kept packed in a register: over one innermost loop (<= 46 hands)
 * each fits in 6 bits (9 * 6 = 54 bits); the even and odd fields are then added into two
 * accumulators with 12-bit room per category, enough for all hands of one 5-card prefix
 * (<= C(47, 2) = 1081), which are unpacked into the 64-bit counts. */
#define EVEN_FIELDS UINT64_C(0x3F03F03F03F03F) /* fields 0, 2, 4, 6, 8 of 6 bits, 12 apart */
static const uint64_t CAT_INC[16] = {
    UINT64_C(1) << 0,  UINT64_C(1) << 6,  UINT64_C(1) << 12, UINT64_C(1) << 18,
    UINT64_C(1) << 24, UINT64_C(1) << 30, UINT64_C(1) << 36, UINT64_C(1) << 42,
    UINT64_C(1) << 48, 0, 0, 0, 0, 0, 0, 0,
};

DS_INLINE void enumerate7(int mode, uint64_t *checksum, uint64_t counts[N_CATS]) {
    uint64_t total = 0;
    for (int a = 0; a < N_CARDS - 6; a++) {
        const uint64_t k1 = SUIT_INIT + CARD_KEY[a], b1 = CARD_BIT[a];
        for (int b = a + 1; b < N_CARDS - 5; b++) {
            const uint64_t k2 = k1 + CARD_KEY[b], b2 = b1 | CARD_BIT[b];
            for (int c = b + 1; c < N_CARDS - 4; c++) {
                const uint64_t k3 = k2 + CARD_KEY[c], b3 = b2 | CARD_BIT[c];
                for (int d = c + 1; d < N_CARDS - 3; d++) {
                    const uint64_t k4 = k3 + CARD_KEY[d], b4 = b3 | CARD_BIT[d];
                    for (int e = d + 1; e < N_CARDS - 2; e++) {
                        const uint64_t k5 = k4 + CARD_KEY[e], b5 = b4 | CARD_BIT[e];
                        uint64_t even = 0, odd = 0; /* categories 0,2,4,6,8 and 1,3,5,7 */
                        for (int f = e + 1; f < N_CARDS - 1; f++) {
                            const uint64_t k6 = k5 + CARD_KEY[f], b6 = b5 | CARD_BIT[f];
                            uint64_t acc = 0;
                            if (((k6 + SUIT_ONE_EACH) & FLUSH_TEST) == 0) {
                                /* no suit has 4 cards yet: no flush whatever the 7th card */
                                for (int g = f + 1; g < N_CARDS; g++) {
                                    uint16_t v = lookup_nonflush(k6 + CARD_KEY[g]);
                                    acc += mode == ACC_CHECKSUM ? v : CAT_INC[v >> 12];
                                }
                            } else {
                                for (int g = f + 1; g < N_CARDS; g++) {
                                    uint64_t k7 = k6 + CARD_KEY[g];
                                    uint16_t v = (k7 & FLUSH_TEST)
                                                     ? lookup_flush(k7, b6 | CARD_BIT[g])
                                                     : lookup_nonflush(k7);
                                    acc += mode == ACC_CHECKSUM ? v : CAT_INC[v >> 12];
                                }
                            }
                            if (mode == ACC_CHECKSUM) {
                                total += acc;
                            } else {
                                even += acc & EVEN_FIELDS;
                                odd += (acc >> 6) & EVEN_FIELDS;
                            }
                        }
                        if (mode == ACC_CATEGORIES) {
                            for (int cat = 0; cat < N_CATS; cat += 2) counts[cat] += (even >> (6 * cat)) & 4095;
                            for (int cat = 1; cat < N_CATS; cat += 2) counts[cat] += (odd >> (6 * (cat - 1))) & 4095;
                        }
                    }
                }
            }
        }
    }
    if (mode == ACC_CHECKSUM) *checksum = total;
}

void ds_enumerate7_category_counts(uint64_t counts[9]) {
    for (int i = 0; i < N_CATS; i++) counts[i] = 0;
    if (!ready()) return;
    enumerate7(ACC_CATEGORIES, NULL, counts);
}

uint64_t ds_enumerate7_checksum(void) {
    uint64_t sum = 0;
    if (!ready()) return 0;
    enumerate7(ACC_CHECKSUM, &sum, NULL);
    return sum;
}

/* ------------------------------------------------------------------------------------
 * Enumeration of all n-card hands for any n (1..7), for tests: per-category counts and
 * the set of distinct values.  Plain recursion; not the fast path.
 * ---------------------------------------------------------------------------------- */

typedef struct {
    uint64_t counts[N_CATS];
    uint64_t *seen; /* 65536-bit set of the values met, or NULL */
} EnumAcc;

static void enumerate_rec(int start, int left, uint64_t sum, uint64_t bits, EnumAcc *acc) {
    if (left == 0) {
        uint16_t v = (sum & FLUSH_TEST) ? lookup_flush(sum, bits) : lookup_nonflush(sum);
        acc->counts[v >> 12]++;
        if (acc->seen) acc->seen[v >> 6] |= UINT64_C(1) << (v & 63);
        return;
    }
    for (int c = start; c <= N_CARDS - left; c++)
        enumerate_rec(c + 1, left - 1, sum + CARD_KEY[c], bits | CARD_BIT[c], acc);
}

static int enumerate_any(int n_cards, EnumAcc *acc) {
    if (n_cards < 1 || n_cards > MAX_HAND || !ready()) return -1;
    enumerate_rec(0, n_cards, SUIT_INIT, 0, acc);
    return 0;
}

int ds_enumerate_category_counts(int n_cards, uint64_t counts[9]) {
    EnumAcc acc = {{0}, NULL};
    int rc = enumerate_any(n_cards, &acc);
    for (int i = 0; i < N_CATS; i++) counts[i] = acc.counts[i];
    return rc;
}

int ds_enumerate_value_set(int n_cards, uint64_t seen[1024]) {
    EnumAcc acc = {{0}, seen};
    return enumerate_any(n_cards, &acc);
}
