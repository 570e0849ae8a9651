/* C API of the native kernels, as seen from Python through cffi.
 *
 * Cards are integers 4*rank + suit (rank 0..12 = 2..A, suit 0..3 = c,d,h,s).
 * The block between the CDEF markers is fed to cffi's cdef() verbatim, so it holds
 * plain declarations only (no macros, no includes).
 */
#ifndef DEEPSTACK_NATIVE_H
#define DEEPSTACK_NATIVE_H

#include <stdint.h>

/* CDEF BEGIN */
int ds_native_abi_version(void);

/* Hand evaluator (hand_eval.c): value of a hand of 1..7 cards as a uint16_t,
 * category << 12 | index (0 high card .. 8 straight flush), higher = better. */
int ds_eval_init(void); /* builds the tables once, thread-safe; 0 ok, -1 failure */
uint16_t ds_eval_cards(const uint8_t *cards, int n); /* no checks; needs ds_eval_init() */
int64_t ds_eval_batch(const uint8_t *cards, int64_t n_hands, int n_cards, uint16_t *out);
/* -1 all rows valid and evaluated; >= 0 index of the first row with a card >= 52 or a
 * repeated card (later rows untouched); -2 bad arguments (n_cards outside 1..7). */
int ds_eval_batch_unchecked(const uint8_t *cards, int64_t n_hands, int n_cards, uint16_t *out);
/* no card checks (garbage values for bad rows, but memory-safe); 0 ok, -2 bad arguments */
void ds_enumerate7_category_counts(uint64_t counts[9]); /* over all C(52,7) hands */
uint64_t ds_enumerate7_checksum(void); /* sum of the values of all C(52,7) hands */
int ds_enumerate_category_counts(int n_cards, uint64_t counts[9]); /* 0 ok, -1 bad n */
int ds_enumerate_value_set(int n_cards, uint64_t seen[1024]);
/* sets bit v of seen (a 65536-bit set) for each value v of an n-card hand; 0 ok, -1 bad n */
int32_t ds_eval_nonflush_table_size(void); /* slots used by the packed non-flush table */
void ds_eval_rank_keys(uint32_t keys[13]); /* the additive rank keys, deuce first */

/* Terminal values (terminal.c).  Hands are rows of k = 1 or 2 cards (H <= 52 resp. 1326,
 * distinct); a hand is blocked on a board when it shares a card with it: its values are 0
 * and its reach is ignored.  A "board table" is ds_table_words(H) = 2 H + 2 uint32 words:
 * the valid hands by strength with their cards, in forward and backward sweep order, then
 * the blocked hands (layout in terminal.c).  Row kernels return -1 when
 * every row was computed, the index of the first row whose board (group) index is out of
 * range (nothing computed), or a negative code: -2 bad sizes/arguments, -3 bad hand cards
 * (card >= 52 or repeated in a hand), -4 bad table / strength-order pair, -5 bad board,
 * -6 bad deck, -7 out of memory, -8 evaluator init failed.  scale may be NULL (1.0). */
int32_t ds_table_words(int H);
int ds_hand_list_check(int H, int k, const uint8_t *hand_cards);
/* -1 ok; >= 0 first bad hand (card >= 52, repeated card, or same cards as an earlier hand);
 * -2 bad sizes */
int ds_board_rank(int H, int k, const uint8_t *hand_cards, const uint8_t *board, int n_board,
                  int32_t *strength, int32_t *order, uint32_t *table);
/* strength[h] = evaluator value of hand + board (-1 blocked); order = the blocked hands, then
 * the valid hands by ascending strength (ties in a fixed but unspecified order); any of the
 * three outputs may be NULL.  Returns the number of valid hands, or < 0. */
int ds_table_pack(int H, int k, const uint8_t *hand_cards, const int32_t *strength,
                  const int32_t *order, uint32_t *table);
/* table from a (strength, order) pair in ds_board_rank's convention (any negative strength
 * = blocked; ties in any order); checks it; returns the number of valid hands or -4. */
int64_t ds_showdown_rows(int H, int k, const uint8_t *hand_cards, int B, const int32_t *strength,
                         const int32_t *order, int64_t R, const int32_t *row_board,
                         const float *reach, const float *scale, float *out);
/* out[i, h] = scale[i] * showdown of hand h on board row_board[i] against reach[i, :]
 * (win minus lose mass over the compatible unblocked opponent hands); strength / order are
 * [B, H] in ds_board_rank's convention (checked, and packed, on every call: the slow path). */
int64_t ds_fold_rows(int H, int k, const uint8_t *hand_cards, int B, const uint8_t *valid, int64_t R,
                     const int32_t *row_board, const float *reach, const float *scale, float *out);
/* out[i, h] = scale[i] * fold mass of hand h; valid is [B, H] (nonzero = hand not blocked) */
int64_t ds_showdown_rows_packed(int H, int B, const uint32_t *tables, int64_t R,
                                const int32_t *row_board, const float *reach, const float *scale,
                                float *out);
int64_t ds_fold_rows_packed(int H, int B, const uint32_t *tables, int64_t R,
                            const int32_t *row_board, const float *reach, const float *scale,
                            float *out);
int64_t ds_terminal_rows_indexed(int fold, int H, int B, const uint32_t *tables, int64_t R,
                                 const int32_t *row_board, const float *reach, const int64_t *in_rows,
                                 int64_t n_in, const float *scale, float *out, const int64_t *out_rows,
                                 int64_t n_out);
/* the same kernels (fold != 0: fold mass, else showdown) with row i reading reach row
 * in_rows[i] of [n_in, H] and writing out row out_rows[i] of [n_out, H] (rows written must
 * differ; out may not overlap reach); returns R + i / 2R + i for a bad in_rows / out_rows entry */
int64_t ds_terminal_rows_product(int fold, int H, int B, const uint32_t *tables, int64_t R,
                                 const int32_t *row_board, const float *reach, const int64_t *in_rows,
                                 int64_t n_in, const float *mult, const int64_t *mult_rows, int64_t n_mult,
                                 const float *scale, float *out, const int64_t *out_rows, int64_t n_out,
                                 int threads);
/* ds_terminal_rows_indexed with row i's range reach[in_rows[i]] * mult[mult_rows[i]] (mult
 * [n_mult, H]; NULL: no product); returns 3R + i for a bad mult_rows entry; threads > 1 shares
 * large calls with the worker pool (pool.c; the same results) */
/* the fast path: tables is [B, ds_table_words(H)] as built by ds_board_rank / ds_table_pack
 * (trusted; only headers are checked); rows on the same board are swept together */
int64_t ds_showdown_avg_rows(int H, int B, const uint32_t *tables, int G, const int32_t *group_start,
                             const int32_t *group_boards, int64_t R, const int32_t *row_group,
                             const float *reach, const float *scale, float *out);
/* out[i, h] = scale[i] * sum over the boards group_boards[group_start[g] .. group_start[g+1])
 * of g = row_group[i] of the showdown of h there (e.g. all rivers of a turn board) */
int ds_runout_equity(int H, int k, const uint8_t *hand_cards, const uint8_t *board, int n_board,
                     const uint8_t *deck, int n_deck, int n_draw, int per_card, const float *reach,
                     double *num, double *den);
/* Over every set of n_draw cards of deck \ board completing the board: num[h] += 2 win + tie,
 * den[h] += compatible mass (valid hands only), so equity = num / (2 den).  per_card: rows
 * [n_rem, H], one per card of deck \ board (in deck order), each runout adding into the rows
 * of the cards it draws.  Returns 0 or < 0. */
int ds_pair_sign_sum(int H, int64_t R, const int32_t *strength, int32_t *total);
/* Check-down matrices: total[i, j] += sign(strength[r, i] - strength[r, j]) over the R boards
 * r where both hands are valid (strength [R, H], negative = blocked); total is [H, H] int32.
 * Returns 0, or -2 for bad sizes / a NULL buffer. */
/* CFR kernels (cfr_kernels.c), float32 row-major [rows, H] buffers, int64 indices; see the
 * comment at the top of cfr_kernels.c.  Return -1 done, >= 0 position of the first index out
 * of range (nothing written), -2 bad sizes / NULL buffer.  threads <= 1: calling thread only. */
int64_t ds_cfr_forward(int64_t n, int64_t H, const int64_t *parent_local, const int64_t *src,
                       const float *parent, int64_t n_parent, const float *table, int64_t n_table,
                       float *out, int threads);
/* out[j] = parent[parent_local[j]] * table[src[j]]; bad index position: j (parent_local),
 * n + j (src) */
int64_t ds_cfr_forward_rows(int64_t n, int64_t H, const int64_t *rows, int64_t n_child,
                            const int64_t *parent_local, const int64_t *src, const float *parent,
                            int64_t n_parent, const float *table, int64_t n_table, float *out,
                            int threads);
/* ds_cfr_forward for child rows j = rows[k], k < n, only (parent_local and src have n_child
 * entries; other rows untouched); bad index position: k (rows), n + k (its parent_local),
 * 2n + k (its src) */
int64_t ds_cfr_backward(int64_t n, int64_t H, const int64_t *parent_local, const int64_t *src,
                        const float *weight, const float *child, const float *table, int64_t n_table,
                        float *dst, int64_t n_dst, int assign, int threads);
/* dst[parent_local[j]] += child[j] * table[src[j]] (* weight[j] unless weight is NULL);
 * assign != 0: each parent's first child writes (=) its row, and parent_local must be
 * non-decreasing (else -2, nothing written) */
int64_t ds_cfr_regrets(int64_t M, int64_t A, int64_t H, const int64_t *dec_rows,
                       const int64_t *dec_children, const float *valid, const float *values,
                       int64_t n_rows, float *regrets, int floor, float pos, float neg, int threads);
/* R[m, a] += (values[children[m, a]] - values[rows[m]]) * valid[m, a]; then floor ? max(R, 0)
 * : R * (R > 0 ? pos : neg); bad index position: m (dec_rows), M + m * A + a (children) */
int64_t ds_cfr_strategy(int64_t M, int64_t A, int64_t H, const float *valid, const float *regrets,
                        float *strategy, int threads);
/* regret matching: S[m, a] = max(R, 0) * valid / sum_a, else valid / sum_a valid */
int64_t ds_cfr_regrets_strategy(int64_t M, int64_t A, int64_t H, const int64_t *dec_rows,
                                const int64_t *dec_children, const float *valid, const float *values,
                                int64_t n_rows, float *regrets, float *strategy, int floor, float pos,
                                float neg, int threads);
/* ds_cfr_regrets then ds_cfr_strategy in one pass, skipping actions whose valid is 0 (their
 * regrets and strategy are not touched); bad index positions as ds_cfr_regrets */
int64_t ds_cfr_regrets_strategy_stream(int64_t M, int64_t A, int64_t H, const int64_t *dec_rows,
                                       const int64_t *dec_children, const float *valid, const float *values,
                                       int64_t n_rows, float *regrets, float *strategy, int floor, float pos,
                                       float neg, int threads);
/* the same, the strategy rows written with non-temporal stores (for tables larger than the
 * caches, read again only later): the same values */
int64_t ds_cfr_average(int64_t M, int64_t A, int64_t H, const int64_t *dec_rows, const float *strategy,
                       const float *reach, int64_t n_rows, float w, float *strategy_sum, int threads);
/* SS[m, a] += w * (S[m, a] * reach[rows[m]]) */
int64_t ds_cfr_add_rows(int64_t n, int64_t H, const int64_t *rows, const float *src, int64_t n_src, float w,
                        float *dst, int threads);
/* dst[i] += w * src[rows[i]] (rows NULL: src[i], needs n <= n_src) */
int64_t ds_cfr_max_rows(int64_t M, int64_t A, int64_t H, const int64_t *dec_rows, const int64_t *dec_children,
                        const float *valid, float *values, int64_t n_rows);
/* best response at decisions: values[rows[m]] = max over a with valid[m, a] != 0 of
 * values[children[m, a]] (-inf if none); bad index position as ds_cfr_regrets */
/* One CFR iteration's kernel calls replayed in C (cfr_program.c): op codes, and per op its
 * integer arguments n[] and pointers p[] in the order of the kernel's parameters (see run_op).
 * AVERAGE and ADD_ROWS take the weight w and do nothing when w <= 0; REGRETS_STRATEGY takes
 * pos and neg. Returns -1, or the first failing op's code (its index in *failed_op). */
enum {
    DS_OP_COPY = 1,
    DS_OP_ZERO = 2,
    DS_OP_FORWARD = 3,
    DS_OP_BACKWARD = 4,
    DS_OP_TERMINAL = 5,
    DS_OP_AVERAGE = 6,
    DS_OP_ADD_ROWS = 7,
    DS_OP_REGRETS_STRATEGY = 8,
    DS_OP_MAX_ROWS = 9
};
typedef struct {
    int32_t op;
    int64_t n[6];
    const void *p[8];
} ds_op;
int64_t ds_cfr_program(const ds_op *ops, int64_t n_ops, float w, float pos, float neg, int threads,
                       int64_t *failed_op);
/* network leaves between hands and buckets (leaf_buckets.c; see its comment) */
int64_t ds_leaf_encode(int64_t R, int64_t H, int64_t K, int64_t L, const int64_t *rows, const float *reach,
                       const int32_t *slots, const float *valid, const float *pot, float inv_stack, float *x,
                       float *mass);
int64_t ds_leaf_decode(int64_t R, int64_t H, int64_t K, int64_t L, const int64_t *rows, const float *net,
                       const int32_t *slots, const float *valid, const float *pot, const float *mass,
                       const float *weight, float *vals, float *acc);
/* the L1-nearest of K centroids (given transposed, [D, K]) of each of N points [N, D] (nearest.c) */
int64_t ds_nearest_l1(int64_t N, int64_t K, int64_t D, const float *points, const float *centroids_t,
                      int64_t *out);
/* external-sampling Monte Carlo CFR over a flat abstract betting tree (mccfr.c; see its comment).
 * ds_mccfr_check_tree: -1 for a sound tree, -2 bad sizes, else the first bad node.
 * ds_mccfr_iterate (mode 0 full, 1 collect the trunk's exits, 2 replay them, 3 evaluate without updates):
 * -1 ok, -2 bad arguments, -3 a bad tree, -4 replay values not matching the exits, -5 more exits than
 * cap_exits (*n_exits says how many), else the index of the first deal out of range (nothing ran).
 * ds_mccfr_continue (one cluster's worker): -1 ok, -2, -3 and deal indices as above, -6 a bad exit. */
int64_t ds_mccfr_check_tree(int64_t n_nodes, const int8_t *kind, const int8_t *player, const int8_t *round,
                            const int32_t *first_child, const int8_t *num_children, const int64_t *slot,
                            const float *fold_value0, const float *stake, int n_rounds, const int32_t *num_buckets,
                            int64_t n_slots);
int64_t ds_mccfr_iterate(int64_t n_nodes, const int8_t *kind, const int8_t *player, const int8_t *round,
                         const int32_t *first_child, const int8_t *num_children, const int64_t *slot,
                         const float *fold_value0, const float *stake, int n_rounds, const int32_t *num_buckets,
                         int split_round, int K, int64_t n_deals, const int32_t *buckets, const int8_t *outcome,
                         const float *weight, int64_t n_slots, const float *regrets, float *regret_out,
                         float *strategy_sum, int mode, uint64_t seed, int64_t cap_exits, int32_t *exit_node,
                         int8_t *exit_player, int64_t *exit_deal, int64_t *n_exits, const double *exit_values,
                         int64_t n_exit_values, double *root_values);
int64_t ds_mccfr_continue(int64_t n_nodes, const int8_t *kind, const int8_t *player, const int8_t *round,
                          const int32_t *first_child, const int8_t *num_children, const int64_t *slot,
                          const float *fold_value0, const float *stake, int n_rounds, const int32_t *num_buckets,
                          int split_round, int K, int64_t n_deals, const int32_t *buckets, const int8_t *outcome,
                          const float *weight, int64_t n_slots, float *regrets, float *strategy_sum, int cluster,
                          uint64_t seed, int64_t n_exits, const int32_t *exit_node, const int8_t *exit_player,
                          const int64_t *exit_deal, double *values);
/* river equity of dealt hands (river_equity.c): cards [n][9] = position 0's two, position 1's two, the
 * board's five; out [n][2] each position's equity against a uniform hand the board and its own cards
 * leave (ties half). -1 ok, -2 bad n or no evaluator, else the first row with a bad or repeated card */
int64_t ds_river_equity_deals(int64_t n, const uint8_t *cards, float *out);
/* CDEF END */

#endif
