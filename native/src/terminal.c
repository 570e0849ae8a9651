/* Terminal values of poker hands against a range, in O(H) per range: fold masses,
 * showdown (win minus lose) masses, chance averages of showdowns, and runout equities.
 *
 * Definitions, for OUR hand h (k = 1 or 2 cards) on a board, against the opponent's reach
 * vector r over the same hand list:
 *   - h is blocked when it shares a card with the board: its outputs are 0, and a blocked
 *     opponent hand never counts, whatever its reach.
 *   - fold(h)     = sum of r(h') over unblocked h' sharing no card with h;
 *   - showdown(h) = sum of r(h') * sign(strength(h) - strength(h')) over the same h'.
 *
 * How (no hand x hand matrix): the valid hands of a board are sorted by strength once (the
 * "board table").  A sweep in that order keeps W, the reach mass seen so far, and cw[c], the
 * part of it held by hands containing card c.  Before a hand h = {a, b} is added,
 *     W - cw[a] - cw[b]
 * is the mass seen so far that is compatible with h: the only hand holding both a and b is h
 * itself, not yet added, so no inclusion-exclusion term is needed.  For k = 1 drop cw[b].
 *
 * Ties without branches: the forward sweep (ascending strength) reads win(h) + E(h), where
 * E(h) is the compatible mass of the members of h's tie group placed before h in the table.
 * The backward sweep visits the groups in descending strength but each group's members in
 * the same order, so it reads lose(h) + E(h).  The difference is win(h) - lose(h) exactly.
 * fold(h) = W - cw[a] - cw[b] + r(h) with the totals (h itself was subtracted twice).
 *
 * Board table (ds_table_words(H) = 2 H + 2 uint32 words; built by ds_board_rank() or
 * ds_table_pack()), n = number of valid hands:
 *   word 0            n
 *   word 1            header: H | k << 16 | TABLE_MAGIC << 24
 *   words 2 .. 2+n    forward records, ascending strength:
 *                     hand index | first card << 16 | second card << 24 (63 when k = 1)
 *   next n words      backward records: the forward position of the record (same fields
 *                     otherwise), groups in descending strength, members in forward order
 *   next H - n words  the blocked hand indices
 * (2 H + 2 words always suffice; the words after the blocked list are unused.)
 * The kernels taking tables trust the records (build them with the functions here); they
 * still check each used table's header and n against H, and every row's board index.
 *
 * Batches: rows on the same board are swept together, LANES rows at a time, with the
 * ranges transposed so that each record costs a few vector operations for all of them.
 * The transposes go 8 x 8 blocks at a time in registers, so the rows are read and written
 * whole and in order; the sweeps index the transposed copy by hand, and it stays in cache.
 * The kernels are compiled twice, for AVX2 and baseline x86-64, and picked at load time.
 * The solver's rows (ds_terminal_rows_product) are written with non-temporal stores: on large
 * trees they are read again only by the backward pass, after the whole forward pass.
 * Accumulation is in float32, like the rest of the solver: the error of a value is of the
 * order of 1e-7 times the opponent's total mass.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "native.h"
#include "pool.h"

#if defined(__GNUC__)
#define DS_INLINE static inline __attribute__((always_inline))
#else
#define DS_INLINE static inline
#endif

/* Function multi-versioning: an AVX2 clone of the vector kernels, chosen at load time. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    !defined(DS_NO_CLONES)
#define DS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DS_CLONES
#endif

#define N_CARDS 52
#define CARD_SLOTS 64
#define MAX_HANDS 1326 /* C(52, 2): distinct hands of at most two cards */
#define MAX_EVAL_CARDS 7
#define TABLE_HEADER 2
#define TABLE_MAGIC 0xD5u
#define TABLE_WORDS(H) (2 * (size_t)(H) + TABLE_HEADER)
#define NO_CARD 63u
#define SYMBOLS 26 /* per hole card: rank * 2 + (card is of the board's flush suit) */
#define LANES 8
#define LANES_MIN_ROWS 2 /* fewer rows of one board than this: one at a time */

#define REC_HAND(e) ((e) & 0x7FFu)
#define REC_A(e) (((e) >> 16) & 63u)
#define REC_B(e) (((e) >> 24) & 63u)
#define MAKE_REC(h, a, b) ((uint32_t)(h) | (uint32_t)(a) << 16 | (uint32_t)(b) << 24)

enum {
    DS_OK = -1,
    DS_BAD_ARGS = -2,
    DS_BAD_HANDS = -3,
    DS_BAD_TABLE = -4,
    DS_BAD_BOARD = -5,
    DS_BAD_DECK = -6,
    DS_NO_MEMORY = -7,
    DS_EVAL_INIT = -8,
};

DS_INLINE uint32_t table_header(int H, int k) {
    return (uint32_t)H | (uint32_t)k << 16 | TABLE_MAGIC << 24;
}

DS_INLINE int header_k(uint32_t header) { return (int)((header >> 16) & 0xFF); }

static int max_hands(int k) { return k == 1 ? N_CARDS : MAX_HANDS; }

static int sizes_ok(int H, int k) { return (k == 1 || k == 2) && H >= 1 && H <= max_hands(k); }

/* Cards of every hand below 52 and distinct within the hand (memory safety of the kernels
 * needs only the range; a repeated card or hand would silently give wrong values). */
static int hand_cards_ok(int H, int k, const uint8_t *hand_cards) {
    for (int h = 0; h < H; h++) {
        const uint8_t *c = hand_cards + (size_t)h * k;
        if (c[0] >= N_CARDS || (k == 2 && (c[1] >= N_CARDS || c[1] == c[0]))) return 0;
    }
    return 1;
}

int32_t ds_table_words(int H) { return H < 0 ? 0 : (int32_t)TABLE_WORDS(H); }

int ds_hand_list_check(int H, int k, const uint8_t *hand_cards) {
    if (!sizes_ok(H, k)) return DS_BAD_ARGS;
    uint64_t seen[N_CARDS] = {0}; /* seen[a] bit b: hand {a, b} met (a <= b; k = 1: b = a) */
    for (int h = 0; h < H; h++) {
        const uint8_t *c = hand_cards + (size_t)h * k;
        int a = c[0], b = k == 2 ? c[1] : c[0];
        if (a >= N_CARDS || b >= N_CARDS || (k == 2 && a == b)) return h;
        if (a > b) {
            int t = a;
            a = b;
            b = t;
        }
        if (seen[a] >> b & 1) return h;
        seen[a] |= UINT64_C(1) << b;
    }
    return DS_OK;
}

/* ------------------------------------------------------------------------------------
 * Board tables
 * ---------------------------------------------------------------------------------- */

static int board_mask(const uint8_t *board, int n_board, uint64_t *mask) {
    uint64_t m = 0;
    for (int i = 0; i < n_board; i++) {
        if (board[i] >= N_CARDS || (m >> board[i] & 1)) return 0;
        m |= UINT64_C(1) << board[i];
    }
    *mask = m;
    return 1;
}

/* Table from strengths and a checked order (n_blocked blocked hands first, then the valid
 * ones by ascending strength).  Layout at the top of the file. */
static void fill_table(int H, int k, const uint8_t *hand_cards, const int32_t *strength,
                       const int32_t *order, int n_blocked, uint32_t *table) {
    const int n = H - n_blocked;
    uint32_t *fwd = table + TABLE_HEADER, *bwd = fwd + n, *blk = bwd + n;
    table[0] = (uint32_t)n;
    table[1] = table_header(H, k);
    for (int i = 0; i < n; i++) {
        const int h = order[n_blocked + i];
        const uint8_t *c = hand_cards + (size_t)h * k;
        fwd[i] = MAKE_REC(h, c[0], k == 2 ? c[1] : NO_CARD);
    }
    int i = 0, out = n;
    while (i < n) {
        const int32_t s = strength[REC_HAND(fwd[i])];
        int j = i + 1;
        while (j < n && strength[REC_HAND(fwd[j])] == s) j++;
        out -= j - i;
        for (int m = i; m < j; m++) bwd[out + m - i] = (fwd[m] & ~0x7FFu) | (uint32_t)m;
        i = j;
    }
    for (i = 0; i < n_blocked; i++) blk[i] = (uint32_t)order[i];
}

/* Strength of every hand on the board and the hands sorted by strength (blocked first).
 *
 * The value of h + board depends on h's cards only through their ranks and, when some suit
 * could make a flush (5 - k or more of the board's cards), through which of them have that
 * suit (with k <= 2 at most one suit can).  So each distinct pair of hole-card symbols
 * (rank, in-flush-suit) is evaluated once (91 evaluations on a rainbow river instead of
 * 1326), and the hands are bucketed by the dense rank of their value (a counting sort). */
static int rank_board(int H, int k, const uint8_t *hand_cards, const uint8_t *board, int n_board,
                      int32_t *strength, int32_t *order, uint32_t *table) {
    uint64_t bmask;
    if (!board_mask(board, n_board, &bmask)) return DS_BAD_BOARD;
    if (ds_eval_init() != 0) return DS_EVAL_INIT;
    const int total = n_board + k;
    int live = -1;
    if (total >= 5) {
        int count[4] = {0};
        for (int i = 0; i < n_board; i++) count[board[i] & 3]++;
        for (int s = 0; s < 4; s++)
            if (count[s] >= 5 - k) live = s;
    }
    /* memo[slot]: value of the symbol pair, UNKNOWN until evaluated; the extra slot
     * N_SLOTS stands for the blocked hands (value -1) */
    enum { N_SLOTS = SYMBOLS * SYMBOLS, UNKNOWN = -2 };
    int32_t memo[N_SLOTS + 1];
    uint16_t used[N_SLOTS], bucket_of[N_SLOTS + 1];
    uint16_t slot_of[MAX_HANDS];
    int n_used = 0;
    for (int i = 0; i < N_SLOTS; i++) memo[i] = UNKNOWN;
    memo[N_SLOTS] = -1;
    uint8_t cards[MAX_EVAL_CARDS];
    memcpy(cards + k, board, (size_t)n_board);

    for (int h = 0; h < H; h++) {
        const uint8_t *c = hand_cards + (size_t)h * k;
        const unsigned a = c[0], b = k == 2 ? c[1] : c[0];
        unsigned slot = (a >> 2) * 2 + ((int)(a & 3) == live);
        if (k == 2) slot = slot * SYMBOLS + (b >> 2) * 2 + ((int)(b & 3) == live);
        slot = ((bmask >> a | bmask >> b) & 1) ? N_SLOTS : slot;
        if (memo[slot] == UNKNOWN) {
            cards[0] = (uint8_t)a;
            if (k == 2) cards[1] = (uint8_t)b;
            memo[slot] = ds_eval_cards(cards, total);
            used[n_used++] = (uint16_t)slot;
        }
        strength[h] = memo[slot];
        slot_of[h] = (uint16_t)slot;
    }

    /* used slots by value (LSD radix sort, two byte passes over the 16-bit values), then
     * one bucket per distinct value; bucket 0 holds the blocked hands */
    uint32_t keys[N_SLOTS], tmp[N_SLOTS];
    for (int i = 0; i < n_used; i++) keys[i] = (uint32_t)memo[used[i]] << 10 | used[i];
    for (int shift = 10; shift < 26; shift += 8) {
        int cnt[257] = {0};
        for (int i = 0; i < n_used; i++) cnt[((keys[i] >> shift) & 0xFF) + 1]++;
        for (int v = 0; v < 256; v++) cnt[v + 1] += cnt[v];
        for (int i = 0; i < n_used; i++) tmp[cnt[(keys[i] >> shift) & 0xFF]++] = keys[i];
        memcpy(keys, tmp, (size_t)n_used * sizeof *keys);
    }
    int n_buckets = 1;
    bucket_of[N_SLOTS] = 0;
    for (int i = 0; i < n_used; i++) {
        if (i == 0 || keys[i] >> 10 != keys[i - 1] >> 10) n_buckets++;
        bucket_of[keys[i] & 0x3FF] = (uint16_t)(n_buckets - 1);
    }
    /* Counting sort of the hands by bucket.  Hands are split into four interleaved streams
     * (h mod 4) with their own counters, so that a run of hands in one bucket does not chain
     * increments of one counter; within a bucket the hands come stream by stream, each
     * stream by ascending index. */
    uint16_t bucket[MAX_HANDS];
    int32_t pos[4][N_SLOTS + 1];
    for (int u = 0; u < 4; u++) memset(pos[u], 0, (size_t)n_buckets * sizeof(int32_t));
    for (int h = 0; h < H; h++) {
        const uint16_t bk = bucket_of[slot_of[h]];
        bucket[h] = bk;
        pos[h & 3][bk]++;
    }
    const int n_blocked = pos[0][0] + pos[1][0] + pos[2][0] + pos[3][0];
    for (int bk = 0, p = 0; bk < n_buckets; bk++)
        for (int u = 0; u < 4; u++) {
            const int c = pos[u][bk];
            pos[u][bk] = p;
            p += c;
        }
    for (int h = 0; h < H; h++) order[pos[h & 3][bucket[h]]++] = h;
    if (table) fill_table(H, k, hand_cards, strength, order, n_blocked, table);
    return H - n_blocked;
}

int ds_board_rank(int H, int k, const uint8_t *hand_cards, const uint8_t *board, int n_board,
                  int32_t *strength, int32_t *order, uint32_t *table) {
    if (!sizes_ok(H, k) || n_board < 0 || n_board + k > MAX_EVAL_CARDS) return DS_BAD_ARGS;
    if (!hand_cards_ok(H, k, hand_cards)) return DS_BAD_HANDS;
    int32_t s_buf[MAX_HANDS], o_buf[MAX_HANDS];
    return rank_board(H, k, hand_cards, board, n_board, strength ? strength : s_buf,
                      order ? order : o_buf, table);
}

/* Check (strength, order) as documented for ds_showdown_rows and build the table. */
static int pack_table(int H, int k, const uint8_t *hand_cards, const int32_t *strength,
                      const int32_t *order, uint32_t *table) {
    uint64_t seen[(MAX_HANDS + 63) / 64] = {0};
    int n_blocked = 0;
    for (int i = 0; i < H; i++) {
        const int32_t h = order[i];
        if (h < 0 || h >= H || (seen[h >> 6] >> (h & 63) & 1)) return DS_BAD_TABLE;
        seen[h >> 6] |= UINT64_C(1) << (h & 63);
        const int32_t s = strength[h];
        if (s < 0) {
            if (i != n_blocked) return DS_BAD_TABLE; /* blocked hands must come first */
            n_blocked++;
        } else if (i > n_blocked && strength[order[i - 1]] > s) {
            return DS_BAD_TABLE; /* not ascending */
        }
    }
    fill_table(H, k, hand_cards, strength, order, n_blocked, table);
    return H - n_blocked;
}

int ds_table_pack(int H, int k, const uint8_t *hand_cards, const int32_t *strength,
                  const int32_t *order, uint32_t *table) {
    if (!sizes_ok(H, k)) return DS_BAD_ARGS;
    if (!hand_cards_ok(H, k, hand_cards)) return DS_BAD_HANDS;
    return pack_table(H, k, hand_cards, strength, order, table);
}

/* ------------------------------------------------------------------------------------
 * Sweeps of one range over one board table (K and ACC are constants at each call site)
 * ---------------------------------------------------------------------------------- */

/* ACC = 0: out[h] = scale * showdown(h), 0 for blocked hands.
 * ACC = 1: out[h] += showdown(h) for valid hands, blocked ones untouched (no scale). */
DS_INLINE void sweep_showdown(const uint32_t *table, const int K, const int ACC,
                              const float *restrict r, float *restrict out, float scale) {
    const int n = (int)table[0];
    const int H = (int)(table[1] & 0xFFFF);
    const uint32_t *fwd = table + TABLE_HEADER, *bwd = fwd + n, *blk = bwd + n;
    float cw[CARD_SLOTS] = {0};
    float W = 0.0f;
    for (int i = 0; i < n; i++) {
        const uint32_t e = fwd[i], h = REC_HAND(e), a = REC_A(e), b = REC_B(e);
        const float x = r[h], ca = cw[a];
        float v = W - ca;
        cw[a] = ca + x;
        if (K == 2) {
            const float cb = cw[b];
            v -= cb;
            cw[b] = cb + x;
        }
        if (ACC) out[h] += v;
        else out[h] = v;
        W += x;
    }
    memset(cw, 0, sizeof cw);
    W = 0.0f;
    for (int i = 0; i < n; i++) {
        const uint32_t e = bwd[i], h = REC_HAND(fwd[REC_HAND(e)]), a = REC_A(e), b = REC_B(e);
        const float x = r[h], ca = cw[a];
        float v = W - ca;
        cw[a] = ca + x;
        if (K == 2) {
            const float cb = cw[b];
            v -= cb;
            cw[b] = cb + x;
        }
        if (ACC) out[h] -= v;
        else out[h] = scale * (out[h] - v);
        W += x;
    }
    if (!ACC)
        for (int i = 0; i < H - n; i++) out[REC_HAND(blk[i])] = 0.0f;
}

/* Totals W and cw[] over the valid hands, with two interleaved accumulators (even and odd
 * records) so that the per-card additions do not form one long dependency chain; the lane
 * kernel sums in the same order, so a row gets the same bits whichever kernel takes it. */
DS_INLINE float table_totals(const uint32_t *table, const int K, const float *restrict r,
                             float *restrict cw) {
    const int n = (int)table[0];
    const uint32_t *rec = table + TABLE_HEADER;
    float acc[2][CARD_SLOTS], W[2] = {0.0f, 0.0f};
    memset(acc, 0, sizeof acc);
    for (int i = 0; i < n; i++) {
        const uint32_t e = rec[i], u = (uint32_t)i & 1;
        const float x = r[REC_HAND(e)];
        W[u] += x;
        acc[u][REC_A(e)] += x;
        if (K == 2) acc[u][REC_B(e)] += x;
    }
    for (int c = 0; c < CARD_SLOTS; c++) cw[c] = acc[0][c] + acc[1][c];
    return W[0] + W[1];
}

DS_INLINE void sweep_fold(const uint32_t *table, const int K, const float *restrict r,
                          float *restrict out, float scale) {
    const int n = (int)table[0];
    const int H = (int)(table[1] & 0xFFFF);
    const uint32_t *rec = table + TABLE_HEADER, *blk = rec + 2 * n;
    float cw[CARD_SLOTS];
    const float W = table_totals(table, K, r, cw);
    for (int i = 0; i < n; i++) {
        const uint32_t e = rec[i], h = REC_HAND(e);
        float v = W - cw[REC_A(e)];
        if (K == 2) v += r[h] - cw[REC_B(e)];
        out[h] = scale * v;
    }
    for (int i = 0; i < H - n; i++) out[REC_HAND(blk[i])] = 0.0f;
}

/* ------------------------------------------------------------------------------------
 * The same sweeps for up to LANES ranges on one board at once
 * ---------------------------------------------------------------------------------- */

typedef float vlanes __attribute__((vector_size(LANES * sizeof(float))));
/* the same vector at any float's address (unaligned loads and stores of whole vectors) */
typedef float vlanes_u __attribute__((vector_size(LANES * sizeof(float)), aligned(sizeof(float))));

/* Lanes beyond n_rows repeat row 0 (their results are dropped). With mult[0] set, a lane's
 * range is reach[l][h] * mult[l][h] (a row of a tree's reach times its multiplier: the
 * reach one step down, formed here instead of being stored). */
typedef struct {
    int n_rows;
    int stream; /* write the out rows with non-temporal stores (16-byte aligned rows) */
    const float *reach[LANES];
    const float *mult[LANES];
    float *out[LANES];
    float scale[LANES];
} LaneRows;

/* LANES x LANES transpose of float vectors in registers: log2(LANES) stages, stage s
 * exchanging the off-diagonal s x s blocks of each 2s x 2s block (two-source shuffles with
 * constant masks: unpacks, shuffles and lane permutes). 16 lanes (AVX-512) measured no
 * faster on a turn lookahead's terminal rows, so only 8 have masks. */
#define TRANSPOSE_STAGE(S, LO, HI)                          \
    for (int i = 0; i < LANES; i++) {                      \
        if (i & (S)) continue;                              \
        const vlanes a_ = m[i], b_ = m[i + (S)];            \
        m[i] = __builtin_shuffle(a_, b_, LO);               \
        m[i + (S)] = __builtin_shuffle(a_, b_, HI);         \
    }

DS_INLINE void transpose_lanes(vlanes m[LANES]) {
    typedef int vmask __attribute__((vector_size(LANES * sizeof(int))));
#if LANES == 8
    TRANSPOSE_STAGE(4, ((vmask){0, 1, 2, 3, 8, 9, 10, 11}), ((vmask){4, 5, 6, 7, 12, 13, 14, 15}));
    TRANSPOSE_STAGE(2, ((vmask){0, 1, 8, 9, 4, 5, 12, 13}), ((vmask){2, 3, 10, 11, 6, 7, 14, 15}));
    TRANSPOSE_STAGE(1, ((vmask){0, 8, 2, 10, 4, 12, 6, 14}), ((vmask){1, 9, 3, 11, 5, 13, 7, 15}));
#else
#error "transpose_lanes has masks for LANES == 8 only"
#endif
}

/* xs[h] = the lanes' reach of hand h, for every hand (transposed a block of 8 hands at a
 * time: the rows are read in order, whole vectors, instead of one float per lane and hand) */
DS_INLINE void lanes_gather(int H, const LaneRows *rows, vlanes *restrict xs) {
    const float *const *rr = rows->reach;
    const float *const *mm = rows->mult;
    int h = 0;
    if (mm[0]) {
        for (; h + LANES <= H; h += LANES) {
            vlanes m[LANES];
            for (int l = 0; l < LANES; l++) m[l] = *(const vlanes_u *)(rr[l] + h) * *(const vlanes_u *)(mm[l] + h);
            transpose_lanes(m);
            for (int j = 0; j < LANES; j++) xs[h + j] = m[j];
        }
        for (; h < H; h++)
            for (int l = 0; l < LANES; l++) xs[h][l] = rr[l][h] * mm[l][h];
        return;
    }
    for (; h + LANES <= H; h += LANES) {
        vlanes m[LANES];
        for (int l = 0; l < LANES; l++) m[l] = *(const vlanes_u *)(rr[l] + h);
        transpose_lanes(m);
        for (int j = 0; j < LANES; j++) xs[h + j] = m[j];
    }
    for (; h < H; h++)
        for (int l = 0; l < LANES; l++) xs[h][l] = rr[l][h];
}

/* out rows [h] = scale * (os[h] - sub[h]) (sub NULL: scale * os[h]): every hand is set in
 * os and sub (0 for the blocked ones) */
DS_INLINE void lanes_scatter(int H, const LaneRows *rows, const vlanes *restrict os, const vlanes *restrict sub) {
    vlanes s;
    for (int l = 0; l < LANES; l++) s[l] = rows->scale[l];
    const int L = rows->n_rows;
    float *const *ro = rows->out;
    int h = 0;
    for (; h + LANES <= H; h += LANES) {
        vlanes m[LANES];
        if (sub)
            for (int j = 0; j < LANES; j++) m[j] = (os[h + j] - sub[h + j]) * s;
        else
            for (int j = 0; j < LANES; j++) m[j] = os[h + j] * s;
        transpose_lanes(m);
#if defined(__x86_64__)
        if (rows->stream) {
            for (int l = 0; l < L; l++) {
                _mm_stream_ps(ro[l] + h, (__m128){m[l][0], m[l][1], m[l][2], m[l][3]});
                _mm_stream_ps(ro[l] + h + 4, (__m128){m[l][4], m[l][5], m[l][6], m[l][7]});
            }
            continue;
        }
#endif
        for (int l = 0; l < L; l++) *(vlanes_u *)(ro[l] + h) = m[l];
    }
    for (; h < H; h++) {
        const vlanes o = (sub ? os[h] - sub[h] : os[h]) * s;
        for (int l = 0; l < L; l++) ro[l][h] = o[l];
    }
}

DS_INLINE void lanes_zero_blocked(const uint32_t *table, vlanes *restrict os) {
    const int n = (int)table[0];
    const int H = (int)(table[1] & 0xFFFF);
    const uint32_t *blk = table + TABLE_HEADER + 2 * n;
    for (int i = 0; i < H - n; i++) os[REC_HAND(blk[i])] = (vlanes){0};
}

/* xs, os: scratch of H vectors each (aligned to a vector), indexed by hand; os has room for
 * 2 H vectors. The two sweeps are independent (each its own running sums), so they run
 * side by side in one loop, one record of each per step: two dependency chains instead of
 * one after the other. The forward sweep's terms go to os, the backward's to os + H, and
 * the scatter takes the difference: the same arithmetic as sweeping one then the other. */
DS_CLONES static void lanes_showdown(const uint32_t *table, const LaneRows *rows, vlanes *restrict xs,
                                     vlanes *restrict os) {
    const int n = (int)table[0];
    const int H = (int)(table[1] & 0xFFFF);
    const int K = header_k(table[1]);
    const uint32_t *fwd = table + TABLE_HEADER, *bwd = fwd + n;
    vlanes *restrict ob = os + H;
    lanes_gather(H, rows, xs);
    vlanes cf[CARD_SLOTS], cb[CARD_SLOTS], Wf = {0}, Wb = {0};
    memset(cf, 0, sizeof cf);
    memset(cb, 0, sizeof cb);
    if (K == 2) {
        for (int i = 0; i < n; i++) {
            const uint32_t e = fwd[i], h = REC_HAND(e), a = REC_A(e), b = REC_B(e);
            const uint32_t g = bwd[i], k = REC_HAND(fwd[REC_HAND(g)]), c = REC_A(g), d = REC_B(g);
            const vlanes x = xs[h], xa = cf[a], xb = cf[b];
            const vlanes y = xs[k], yc = cb[c], yd = cb[d];
            os[h] = Wf - xa - xb;
            ob[k] = Wb - yc - yd;
            cf[a] = xa + x;
            cf[b] = xb + x;
            cb[c] = yc + y;
            cb[d] = yd + y;
            Wf += x;
            Wb += y;
        }
    } else {
        for (int i = 0; i < n; i++) {
            const uint32_t e = fwd[i], h = REC_HAND(e), a = REC_A(e);
            const uint32_t g = bwd[i], k = REC_HAND(fwd[REC_HAND(g)]), c = REC_A(g);
            const vlanes x = xs[h], xa = cf[a];
            const vlanes y = xs[k], yc = cb[c];
            os[h] = Wf - xa;
            ob[k] = Wb - yc;
            cf[a] = xa + x;
            cb[c] = yc + y;
            Wf += x;
            Wb += y;
        }
    }
    lanes_zero_blocked(table, os);
    lanes_zero_blocked(table, ob);
    lanes_scatter(H, rows, os, ob);
}

DS_CLONES static void lanes_fold(const uint32_t *table, const LaneRows *rows, vlanes *restrict xs,
                                 vlanes *restrict os) {
    const int n = (int)table[0];
    const int H = (int)(table[1] & 0xFFFF);
    const int K = header_k(table[1]);
    const uint32_t *fwd = table + TABLE_HEADER;
    lanes_gather(H, rows, xs);
    /* two interleaved accumulators (even and odd records), summed as table_totals sums */
    vlanes cw[2][CARD_SLOTS], W[2] = {{0}, {0}};
    memset(cw, 0, sizeof cw);
    for (int i = 0; i < n; i++) {
        const uint32_t e = fwd[i], u = (uint32_t)i & 1;
        const vlanes x = xs[REC_HAND(e)];
        W[u] += x;
        cw[u][REC_A(e)] += x;
        if (K == 2) cw[u][REC_B(e)] += x;
    }
    const vlanes T = W[0] + W[1];
    for (int c = 0; c < CARD_SLOTS; c++) cw[0][c] += cw[1][c];
    for (int i = 0; i < n; i++) {
        const uint32_t e = fwd[i], h = REC_HAND(e);
        vlanes v = T - cw[0][REC_A(e)];
        if (K == 2) v += xs[h] - cw[0][REC_B(e)];
        os[h] = v;
    }
    lanes_zero_blocked(table, os);
    lanes_scatter(H, rows, os, NULL);
}

/* ------------------------------------------------------------------------------------
 * Row kernels
 * ---------------------------------------------------------------------------------- */

/* Board indices of the rows, then header and size of each table they use.
 * Returns DS_OK, the first bad row, or DS_BAD_TABLE. */
static int64_t check_rows(int H, int B, const uint32_t *tables, int64_t R, const int32_t *row_board) {
    for (int64_t i = 0; i < R; i++) {
        const int32_t b = row_board[i];
        if (b < 0 || b >= B) return i;
    }
    for (int64_t i = 0; i < R; i++) {
        const uint32_t *t = tables + (size_t)row_board[i] * TABLE_WORDS(H);
        const int k = header_k(t[1]);
        if ((k != 1 && k != 2) || t[1] != table_header(H, k) || t[0] > (uint32_t)H) return DS_BAD_TABLE;
    }
    return DS_OK;
}

static void showdown_one(const uint32_t *t, const float *r, float *o, float s) {
    if (header_k(t[1]) == 2) sweep_showdown(t, 2, 0, r, o, s);
    else sweep_showdown(t, 1, 0, r, o, s);
}

static void fold_one(const uint32_t *t, const float *r, float *o, float s) {
    if (header_k(t[1]) == 2) sweep_fold(t, 2, r, o, s);
    else sweep_fold(t, 1, r, o, s);
}

typedef void (*one_fn)(const uint32_t *, const float *, float *, float);
typedef void (*lanes_fn)(const uint32_t *, const LaneRows *, vlanes *, vlanes *);

/* Rows grouped by board (a counting sort of the row indices); each board's rows go through
 * the lane kernel LANES at a time, a lone row through the scalar one. */
/* Row i reads reach row in_rows[i] (times mult row mult_rows[i] when mult is set) and writes
 * out row out_rows[i] (identity when NULL). */
#define IN_ROW(i) (reach + (size_t)(in_rows ? in_rows[i] : (i)) * H)
#define MULT_ROW(i) (mult + (size_t)mult_rows[i] * H)
#define OUT_ROW(i) (out + (size_t)(out_rows ? out_rows[i] : (i)) * H)

/* The scalar kernel on row i (its range formed in `buf` when there is a multiplier). */
static void one_row(one_fn one, const uint32_t *t, int H, const float *reach, const int64_t *in_rows,
                    const float *mult, const int64_t *mult_rows, float *out, const int64_t *out_rows,
                    const float *scale, int64_t i, float *buf) {
    const float *r = IN_ROW(i);
    if (mult) {
        const float *m = MULT_ROW(i);
        for (int h = 0; h < H; h++) buf[h] = r[h] * m[h];
        r = buf;
    }
    one(t, r, OUT_ROW(i), scale ? scale[i] : 1.0f);
}

/* A run of rows on one board: perm[j .. j + n) (n < LANES_MIN_ROWS: swept one at a time). */
typedef struct {
    int32_t board;
    int32_t n;
    int64_t j;
} RowGroup;

typedef struct {
    int H;
    size_t stride;
    const uint32_t *tables;
    const RowGroup *groups;
    const int64_t *perm;
    const float *reach, *mult, *scale;
    const int64_t *in_rows, *mult_rows, *out_rows;
    float *out;
    int stream;
    one_fn one;
    lanes_fn lanes;
} RowsJob;

/* Groups [lo, hi) of a RowsJob; a thread's own scratch (a failed allocation: one row at a time). */
static void rows_range(const void *vargs, int64_t lo, int64_t hi) {
    const RowsJob *g = (const RowsJob *)vargs;
    const int H = g->H;
    const float *reach = g->reach, *mult = g->mult;
    const int64_t *in_rows = g->in_rows, *mult_rows = g->mult_rows, *out_rows = g->out_rows;
    float *out = g->out;
    float buf[MAX_HANDS];
    vlanes *scratch = aligned_alloc(sizeof(vlanes), 3 * (size_t)H * sizeof *scratch);
    for (int64_t k = lo; k < hi; k++) {
        const RowGroup *rg = &g->groups[k];
        const uint32_t *t = g->tables + (size_t)rg->board * g->stride;
        if (rg->n < LANES_MIN_ROWS || !scratch) {
            for (int64_t j = rg->j; j < rg->j + rg->n; j++)
                one_row(g->one, t, H, reach, in_rows, mult, mult_rows, out, out_rows, g->scale, g->perm[j], buf);
            continue;
        }
        LaneRows lr;
        lr.n_rows = rg->n;
        lr.stream = g->stream;
        for (int l = 0; l < LANES; l++) {
            const int64_t i = g->perm[rg->j + (l < lr.n_rows ? l : 0)];
            lr.reach[l] = IN_ROW(i);
            lr.mult[l] = mult ? MULT_ROW(i) : NULL;
            lr.out[l] = OUT_ROW(i);
            lr.scale[l] = g->scale ? g->scale[i] : 1.0f;
        }
        g->lanes(t, &lr, scratch, scratch + H);
    }
    free(scratch);
#if defined(__x86_64__)
    if (g->stream) _mm_sfence(); /* the streamed rows are visible to the caller from here */
#endif
}

#define ROWS_MAX_CHUNKS 256

static int64_t run_rows(int H, int B, const uint32_t *tables, int64_t R, const int32_t *row_board,
                        const float *reach, const int64_t *in_rows, const float *mult,
                        const int64_t *mult_rows, const float *scale, float *out,
                        const int64_t *out_rows, one_fn one, lanes_fn lanes, int threads) {
    if (H < 1 || H > MAX_HANDS || B < 0 || R < 0) return DS_BAD_ARGS;
    const int64_t bad = check_rows(H, B, tables, R, row_board);
    if (bad != DS_OK) return bad;
    const size_t stride = TABLE_WORDS(H);
    float buf[MAX_HANDS];
#if defined(__x86_64__)
    const int stream = mult && (H & 3) == 0 && ((uintptr_t)out & 15) == 0;
#else
    const int stream = 0;
#endif
    int64_t *first = R > 1 ? calloc((size_t)B + 1, sizeof *first) : NULL;
    int64_t *perm = R > 1 ? malloc((size_t)R * sizeof *perm) : NULL;
    RowGroup *groups = R > 1 ? malloc((size_t)R * sizeof *groups) : NULL;
    if (!first || !perm || !groups) { /* a single row, or no memory: one at a time */
        free(first);
        free(perm);
        free(groups);
        for (int64_t i = 0; i < R; i++)
            one_row(one, tables + (size_t)row_board[i] * stride, H, reach, in_rows, mult, mult_rows, out,
                    out_rows, scale, i, buf);
        return DS_OK;
    }
    for (int64_t i = 0; i < R; i++) first[row_board[i] + 1]++;
    for (int b = 0; b < B; b++) first[b + 1] += first[b];
    for (int64_t i = 0; i < R; i++) perm[first[row_board[i]]++] = i;
    /* first[b] is now the end of board b's rows: cut each board's rows into lane groups */
    int64_t n_groups = 0, begin = 0;
    for (int b = 0; b < B; begin = first[b], b++) {
        for (int64_t j = begin; j < first[b];) {
            const int64_t count = first[b] - j;
            const int n = count < LANES_MIN_ROWS ? 1 : (count < LANES ? (int)count : LANES);
            groups[n_groups++] = (RowGroup){b, n, j};
            j += n;
        }
    }
    const RowsJob job = {H, stride, tables, groups, perm, reach, mult, scale, in_rows, mult_rows, out_rows,
                         out, stream, one, lanes};
    const int parts = ds_pool_parts(threads, n_groups, (R / (n_groups > 0 ? n_groups : 1)) * (int64_t)H);
    const int64_t chunks = ds_pool_chunks(parts, n_groups, ROWS_MAX_CHUNKS);
    int64_t bounds[ROWS_MAX_CHUNKS + 1];
    for (int64_t c = 0; c <= chunks; c++) bounds[c] = n_groups * c / chunks;
    ds_pool_run(rows_range, &job, bounds, (int)chunks, parts);
    free(first);
    free(perm);
    free(groups);
    return DS_OK;
}

int64_t ds_showdown_rows_packed(int H, int B, const uint32_t *tables, int64_t R,
                                const int32_t *row_board, const float *reach, const float *scale,
                                float *out) {
    return run_rows(H, B, tables, R, row_board, reach, NULL, NULL, NULL, scale, out, NULL, showdown_one, lanes_showdown,
                    1);
}

int64_t ds_fold_rows_packed(int H, int B, const uint32_t *tables, int64_t R,
                            const int32_t *row_board, const float *reach, const float *scale,
                            float *out) {
    return run_rows(H, B, tables, R, row_board, reach, NULL, NULL, NULL, scale, out, NULL, fold_one, lanes_fold, 1);
}

int64_t ds_terminal_rows_indexed(int fold, int H, int B, const uint32_t *tables, int64_t R,
                                 const int32_t *row_board, const float *reach, const int64_t *in_rows,
                                 int64_t n_in, const float *scale, float *out, const int64_t *out_rows,
                                 int64_t n_out) {
    return ds_terminal_rows_product(fold, H, B, tables, R, row_board, reach, in_rows, n_in, NULL, NULL, 0,
                                    scale, out, out_rows, n_out, 1);
}

int64_t ds_terminal_rows_product(int fold, int H, int B, const uint32_t *tables, int64_t R,
                                 const int32_t *row_board, const float *reach, const int64_t *in_rows,
                                 int64_t n_in, const float *mult, const int64_t *mult_rows, int64_t n_mult,
                                 const float *scale, float *out, const int64_t *out_rows, int64_t n_out,
                                 int threads) {
    if (!in_rows || !out_rows || n_in < 0 || n_out < 0 || R < 0 || (mult && (!mult_rows || n_mult < 0)))
        return DS_BAD_ARGS;
    for (int64_t i = 0; i < R; i++)
        if (in_rows[i] < 0 || in_rows[i] >= n_in) return R + i;
    for (int64_t i = 0; i < R; i++)
        if (out_rows[i] < 0 || out_rows[i] >= n_out) return 2 * R + i;
    if (mult)
        for (int64_t i = 0; i < R; i++)
            if (mult_rows[i] < 0 || mult_rows[i] >= n_mult) return 3 * R + i;
    return fold ? run_rows(H, B, tables, R, row_board, reach, in_rows, mult, mult_rows, scale, out, out_rows,
                           fold_one, lanes_fold, threads)
                : run_rows(H, B, tables, R, row_board, reach, in_rows, mult, mult_rows, scale, out, out_rows,
                           showdown_one, lanes_showdown, threads);
}

int64_t ds_showdown_avg_rows(int H, int B, const uint32_t *tables, int G, const int32_t *group_start,
                             const int32_t *group_boards, int64_t R, const int32_t *row_group,
                             const float *reach, const float *scale, float *out) {
    if (H < 1 || H > MAX_HANDS || B < 0 || G < 0 || R < 0 || group_start[0] != 0) return DS_BAD_ARGS;
    for (int g = 0; g < G; g++)
        if (group_start[g + 1] < group_start[g]) return DS_BAD_ARGS;
    const int64_t bad_member = check_rows(H, B, tables, group_start[G], group_boards);
    if (bad_member != DS_OK) return bad_member >= 0 ? DS_BAD_ARGS : bad_member;
    for (int64_t i = 0; i < R; i++)
        if (row_group[i] < 0 || row_group[i] >= G) return i;
    const size_t stride = TABLE_WORDS(H);
    for (int64_t i = 0; i < R; i++) {
        const float *r = reach + (size_t)i * H;
        float *o = out + (size_t)i * H;
        memset(o, 0, (size_t)H * sizeof *o);
        const int g = row_group[i];
        for (int32_t m = group_start[g]; m < group_start[g + 1]; m++) {
            const uint32_t *t = tables + (size_t)group_boards[m] * stride;
            if (header_k(t[1]) == 2) sweep_showdown(t, 2, 1, r, o, 1.0f);
            else sweep_showdown(t, 1, 1, r, o, 1.0f);
        }
        if (scale) {
            const float s = scale[i];
            for (int h = 0; h < H; h++) o[h] *= s;
        }
    }
    return DS_OK;
}

/* Generic entry points on (strength, order) or valid masks: check everything, pack the
 * boards the rows use, then run the table kernels. */
int64_t ds_showdown_rows(int H, int k, const uint8_t *hand_cards, int B, const int32_t *strength,
                         const int32_t *order, int64_t R, const int32_t *row_board,
                         const float *reach, const float *scale, float *out) {
    if (!sizes_ok(H, k) || B < 0 || R < 0) return DS_BAD_ARGS;
    if (!hand_cards_ok(H, k, hand_cards)) return DS_BAD_HANDS;
    for (int64_t i = 0; i < R; i++)
        if (row_board[i] < 0 || row_board[i] >= B) return i;
    int32_t *slot = malloc((size_t)(B > 0 ? B : 1) * sizeof *slot);
    int32_t *packed_board = malloc((size_t)(R > 0 ? R : 1) * sizeof *packed_board);
    if (!slot || !packed_board) {
        free(slot);
        free(packed_board);
        return DS_NO_MEMORY;
    }
    for (int b = 0; b < B; b++) slot[b] = -1;
    int n_used = 0;
    for (int64_t i = 0; i < R; i++) {
        if (slot[row_board[i]] < 0) slot[row_board[i]] = n_used++;
        packed_board[i] = slot[row_board[i]];
    }
    const size_t stride = TABLE_WORDS(H);
    uint32_t *tables = malloc((size_t)(n_used > 0 ? n_used : 1) * stride * sizeof *tables);
    int64_t rc = tables ? DS_OK : DS_NO_MEMORY;
    for (int b = 0; b < B && rc == DS_OK; b++) {
        if (slot[b] < 0) continue;
        const size_t off = (size_t)b * H;
        if (pack_table(H, k, hand_cards, strength + off, order + off, tables + (size_t)slot[b] * stride) < 0)
            rc = DS_BAD_TABLE;
    }
    if (rc == DS_OK) rc = ds_showdown_rows_packed(H, n_used, tables, R, packed_board, reach, scale, out);
    free(tables);
    free(slot);
    free(packed_board);
    return rc;
}

int64_t ds_fold_rows(int H, int k, const uint8_t *hand_cards, int B, const uint8_t *valid, int64_t R,
                     const int32_t *row_board, const float *reach, const float *scale, float *out) {
    if (!sizes_ok(H, k) || B < 0 || R < 0) return DS_BAD_ARGS;
    if (!hand_cards_ok(H, k, hand_cards)) return DS_BAD_HANDS;
    for (int64_t i = 0; i < R; i++)
        if (row_board[i] < 0 || row_board[i] >= B) return i;
    for (int64_t i = 0; i < R; i++) {
        const uint8_t *v = valid + (size_t)row_board[i] * H;
        const float *r = reach + (size_t)i * H;
        float *o = out + (size_t)i * H;
        const float s = scale ? scale[i] : 1.0f;
        float acc[4][CARD_SLOTS];
        float W4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        memset(acc, 0, sizeof acc);
        for (int h = 0; h < H; h++) {
            const float x = v[h] ? r[h] : 0.0f;
            const uint8_t *c = hand_cards + (size_t)h * k;
            W4[h & 3] += x;
            acc[h & 3][c[0]] += x;
            if (k == 2) acc[h & 3][c[1]] += x;
        }
        float cw[CARD_SLOTS];
        for (int c = 0; c < CARD_SLOTS; c++) cw[c] = (acc[0][c] + acc[1][c]) + (acc[2][c] + acc[3][c]);
        const float W = (W4[0] + W4[1]) + (W4[2] + W4[3]);
        for (int h = 0; h < H; h++) {
            const uint8_t *c = hand_cards + (size_t)h * k;
            float f = W - cw[c[0]];
            if (k == 2) f += r[h] - cw[c[1]];
            o[h] = v[h] ? s * f : 0.0f;
        }
    }
    return DS_OK;
}

/* ------------------------------------------------------------------------------------
 * Runout equities
 * ---------------------------------------------------------------------------------- */

/* For the valid hands of one final board: num[t][h] += showdown + compat (= 2 win + tie),
 * den[t][h] += compat, for each of the n_targets accumulator rows. */
DS_INLINE void accumulate_equity(const uint32_t *table, const int K, const float *restrict r,
                                 float *restrict sd, int n_targets, double *const *num,
                                 double *const *den) {
    sweep_showdown(table, K, 0, r, sd, 1.0f);
    const int n = (int)table[0];
    const uint32_t *rec = table + TABLE_HEADER;
    float cw[CARD_SLOTS];
    const float W = table_totals(table, K, r, cw);
    for (int i = 0; i < n; i++) {
        const uint32_t e = rec[i], h = REC_HAND(e);
        float compat = W - cw[REC_A(e)];
        if (K == 2) compat += r[h] - cw[REC_B(e)];
        const double c = compat, s = (double)sd[h] + compat;
        for (int t = 0; t < n_targets; t++) {
            num[t][h] += s;
            den[t][h] += c;
        }
    }
}

int ds_runout_equity(int H, int k, const uint8_t *hand_cards, const uint8_t *board, int n_board,
                     const uint8_t *deck, int n_deck, int n_draw, int per_card, const float *reach,
                     double *num, double *den) {
    if (!sizes_ok(H, k) || n_board < 0 || n_draw < 0 || n_deck < 0 || n_deck > N_CARDS ||
        n_board + n_draw + k > MAX_EVAL_CARDS || (per_card && n_draw < 1))
        return DS_BAD_ARGS;
    if (!hand_cards_ok(H, k, hand_cards)) return DS_BAD_HANDS;
    uint64_t bmask, dmask;
    if (!board_mask(board, n_board, &bmask)) return DS_BAD_BOARD;
    if (!board_mask(deck, n_deck, &dmask)) return DS_BAD_DECK;
    uint8_t rem[N_CARDS];
    int n_rem = 0;
    for (int i = 0; i < n_deck; i++)
        if (!(bmask >> deck[i] & 1)) rem[n_rem++] = deck[i];
    if (n_draw > n_rem) return DS_BAD_ARGS;
    const size_t rows = per_card ? (size_t)n_rem : 1;
    memset(num, 0, rows * H * sizeof *num);
    memset(den, 0, rows * H * sizeof *den);

    uint32_t *table = malloc(TABLE_WORDS(H) * sizeof *table);
    float *sd = malloc((size_t)H * sizeof *sd);
    int32_t *strength = malloc((size_t)H * sizeof *strength);
    int32_t *order = malloc((size_t)H * sizeof *order);
    int rc = 0;
    if (!table || !sd || !strength || !order) rc = DS_NO_MEMORY;
    uint8_t full[MAX_EVAL_CARDS];
    memcpy(full, board, (size_t)n_board);
    int idx[MAX_EVAL_CARDS]; /* the current combination: n_draw increasing positions in rem */
    for (int i = 0; i < n_draw; i++) idx[i] = i;
    while (rc == 0) {
        for (int i = 0; i < n_draw; i++) full[n_board + i] = rem[idx[i]];
        const int nv = rank_board(H, k, hand_cards, full, n_board + n_draw, strength, order, table);
        if (nv < 0) {
            rc = nv;
            break;
        }
        double *nums[MAX_EVAL_CARDS], *dens[MAX_EVAL_CARDS];
        const int n_targets = per_card ? n_draw : 1;
        for (int t = 0; t < n_targets; t++) {
            const size_t row = per_card ? (size_t)idx[t] : 0;
            nums[t] = num + row * H;
            dens[t] = den + row * H;
        }
        if (k == 2) accumulate_equity(table, 2, reach, sd, n_targets, nums, dens);
        else accumulate_equity(table, 1, reach, sd, n_targets, nums, dens);
        int i = n_draw - 1; /* next combination */
        while (i >= 0 && idx[i] == n_rem - n_draw + i) i--;
        if (i < 0) break;
        idx[i]++;
        for (int j = i + 1; j < n_draw; j++) idx[j] = idx[j - 1] + 1;
    }
    free(table);
    free(sd);
    free(strength);
    free(order);
    return rc;
}

/* ------------------------------------------------------------------ check-down matrices */
DS_CLONES
int ds_pair_sign_sum(int H, int64_t R, const int32_t *strength, int32_t *total)
{
    if (H <= 0 || R < 0 || (R > 0 && !strength) || !total) return -2;
    for (int64_t r = 0; r < R; ++r) {
        const int32_t *s = strength + r * (int64_t)H;
        for (int i = 0; i < H; ++i) {
            const int32_t si = s[i];
            if (si < 0) continue;
            int32_t *row = total + (int64_t)i * H;
            for (int j = 0; j < H; ++j) {
                const int32_t sj = s[j];
                /* +1 / -1 / 0, and 0 where hand j is blocked (sj < 0 < si) */
                row[j] += ((si > sj) - (si < sj)) & -(int32_t)(sj >= 0);
            }
        }
    }
    return 0;
}
