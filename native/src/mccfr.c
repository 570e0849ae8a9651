/* External-sampling Monte Carlo CFR over an abstract betting tree (the blueprint's equilibrium finder).
 *
 * The tree is card-free and flat: node n has a kind, the position acting (decisions), the round, and its
 * children at first_child[n] .. first_child[n] + num_children[n] - 1 (always after n: the recursion ends).
 * A decision's information sets are its (node, bucket) pairs, one block of num_children slots each from
 * slot[n]: the regrets and the strategy sums live at slot[n] + bucket * A + a. Cards never enter here: every
 * deal arrives as each position's bucket per round and the showdown's outcome, drawn by the caller, so the
 * same code serves a lossless Leduc abstraction and a hold'em one.
 *
 * One deal is one iteration: a traversal for each position in turn. The traverser's actions are all
 * explored (regrets updated with the sampled counterfactual values); the opponent samples one action from its
 * current strategy and adds that strategy to its average (external sampling, Lanctot et al. 2009).
 * Discounting (linear CFR) is left to the caller, who scales both accumulators between calls.
 *
 * Public clusters (seed 001, the distributed scheme): the rounds before split_round are the trunk. A deal
 * carries K continuations, one per public cluster of split_round's boards: the buckets of the rounds from
 * split_round on and the outcome with a board drawn from that cluster, and the cluster's weight (its boards
 * that the dealt hands leave possible). Where the trunk reaches split_round, the value is the weighted mean
 * of the K continuations' (unbiased: every board counts alike). With K = 1 this is plain external sampling.
 * The two-pass form splits that between processes: COLLECT walks the trunk only and records where it
 * leaves it (deal, node, traverser), each cluster's worker values those exits (ds_mccfr_continue, updating
 * its own information sets), and REPLAY walks the same trunk again (same seed, same strategy: the same
 * samples) taking the exits' values in order, its regret increments written apart so that the strategy
 * stays the one COLLECT sampled with. */
#include <stdint.h>

#include "native.h"

#define MC_MAX_ACTIONS 32

enum { MC_DECISION = 0, MC_FOLD = 1, MC_SHOWDOWN = 2, MC_CHANCE = 3 };
enum { MC_FULL = 0, MC_COLLECT = 1, MC_REPLAY = 2, MC_EVAL = 3 };

typedef struct {
    const int8_t *kind, *player, *round, *num_children;
    const int32_t *first_child;
    const int64_t *slot;
    const float *fold_value0, *stake;
    int n_rounds, split_round, K;
    /* this deal's [K][2][n_rounds] buckets, [K] outcomes and [K] weights */
    const int32_t *bucket;
    const int8_t *outcome;
    const float *weight;
    int k; /* the continuation being walked; -1 in the trunk */
    /* its weight over the deal's total (1 in the trunk): updates inside a continuation are scaled by it,
     * the chance probability of its board over the probability it was drawn with, so that a hand whose
     * cards block boards of some cluster does not count more there than elsewhere (unbiased regrets) */
    double scale;
    int mode;
    const float *regrets; /* read: the current strategy */
    float *regret_out;    /* written: the regret increments (== regrets for immediate updates) */
    float *strategy_sum;
    uint64_t rng;
    /* the trunk's exits: recorded by COLLECT, their values read back by REPLAY */
    int64_t deal, n_exits, cap_exits, next_exit;
    int32_t *exit_node;
    int8_t *exit_player;
    int64_t *exit_deal;
    const double *exit_values;
    int64_t n_exit_values;
    int overflow;
} mc_ctx;

static inline uint64_t mc_next(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline double mc_uniform(uint64_t *s) { return (double)(mc_next(s) >> 11) * (1.0 / 9007199254740992.0); }

/* regret matching: positive regrets normalised, uniform where none is positive */
static void mc_strategy(const float *r, int A, double *s) {
    double total = 0.0;
    for (int a = 0; a < A; a++) {
        s[a] = r[a] > 0.0f ? (double)r[a] : 0.0;
        total += s[a];
    }
    for (int a = 0; a < A; a++) s[a] = total > 0.0 ? s[a] / total : 1.0 / A;
}

static inline int mc_updates(const mc_ctx *c) { return c->mode == MC_FULL || c->mode == MC_REPLAY; }

static double mc_traverse(mc_ctx *c, int32_t n, int p);

static double mc_total_weight(const mc_ctx *c) {
    double total = 0.0;
    for (int k = 0; k < c->K; k++) total += c->weight[k];
    return total;
}

/* the trunk reaches split_round below chance node n */
static double mc_exit(mc_ctx *c, int32_t n, int p) {
    int32_t child = c->first_child[n];
    if (c->mode == MC_COLLECT) {
        if (c->n_exits < c->cap_exits) {
            c->exit_node[c->n_exits] = n;
            c->exit_player[c->n_exits] = (int8_t)p;
            c->exit_deal[c->n_exits] = c->deal;
        } else {
            c->overflow = 1;
        }
        c->n_exits++;
        return 0.0;
    }
    if (c->mode == MC_REPLAY) {
        if (c->next_exit >= c->n_exit_values) {
            c->overflow = 1;
            return 0.0;
        }
        return c->exit_values[c->next_exit++];
    }
    double v = 0.0, total = mc_total_weight(c);
    for (int k = 0; k < c->K; k++) {
        if (c->weight[k] <= 0.0f) continue;
        c->k = k;
        c->scale = c->weight[k] / total;
        v += c->scale * mc_traverse(c, child, p);
    }
    c->k = -1;
    c->scale = 1.0;
    return v;
}

static double mc_traverse(mc_ctx *c, int32_t n, int p) {
    int k = c->k < 0 ? 0 : c->k;
    switch (c->kind[n]) {
    case MC_FOLD:
        return p == 0 ? c->fold_value0[n] : -c->fold_value0[n];
    case MC_SHOWDOWN: {
        double v0 = c->outcome[k] * (double)c->stake[n];
        return p == 0 ? v0 : -v0;
    }
    case MC_CHANCE:
        if (c->k < 0 && c->round[c->first_child[n]] == c->split_round) return mc_exit(c, n, p);
        return mc_traverse(c, c->first_child[n], p);
    default:
        break;
    }
    int q = c->player[n], A = c->num_children[n];
    int64_t base = c->slot[n] + (int64_t)c->bucket[(k * 2 + q) * c->n_rounds + c->round[n]] * A;
    double s[MC_MAX_ACTIONS];
    mc_strategy(c->regrets + base, A, s);
    if (q == p) {
        double v[MC_MAX_ACTIONS], ev = 0.0;
        for (int a = 0; a < A; a++) {
            v[a] = mc_traverse(c, c->first_child[n] + a, p);
            ev += s[a] * v[a];
        }
        if (mc_updates(c))
            for (int a = 0; a < A; a++) c->regret_out[base + a] += (float)(c->scale * (v[a] - ev));
        return ev;
    }
    if (mc_updates(c))
        for (int a = 0; a < A; a++) c->strategy_sum[base + a] += (float)(c->scale * s[a]);
    double u = mc_uniform(&c->rng), acc = s[0];
    int a = 0;
    while (u >= acc && a < A - 1) acc += s[++a];
    return mc_traverse(c, c->first_child[n] + a, p);
}

int64_t ds_mccfr_check_tree(int64_t n_nodes, const int8_t *kind, const int8_t *player, const int8_t *round,
                            const int32_t *first_child, const int8_t *num_children, const int64_t *slot,
                            const float *fold_value0, const float *stake, int n_rounds, const int32_t *num_buckets,
                            int64_t n_slots) {
    if (n_nodes < 1 || n_rounds < 1 || n_rounds > 8 || n_slots < 0) return -2;
    for (int r = 0; r < n_rounds; r++)
        if (num_buckets[r] < 1) return -2;
    for (int64_t n = 0; n < n_nodes; n++) {
        int k = kind[n];
        if (round[n] < 0 || round[n] >= n_rounds) return n;
        if (k == MC_FOLD || k == MC_SHOWDOWN) {
            if (!(fold_value0[n] - fold_value0[n] == 0.0f) || !(stake[n] - stake[n] == 0.0f)) return n; /* not finite */
            continue;
        }
        if (k == MC_CHANCE) {
            if (first_child[n] <= n || first_child[n] >= n_nodes) return n;
            continue;
        }
        if (k != MC_DECISION) return n;
        int A = num_children[n];
        if (A < 1 || A > MC_MAX_ACTIONS || (player[n] != 0 && player[n] != 1)) return n;
        if (first_child[n] <= n || (int64_t)first_child[n] + A > n_nodes) return n;
        /* compared without adding to slot[n]: a slot near INT64_MAX would overflow past the check */
        if (slot[n] < 0 || slot[n] > n_slots - (int64_t)num_buckets[(int)round[n]] * A) return n;
    }
    return -1;
}

/* -1 when the deal's buckets, outcomes and weights are in range, else 0 */
static int mc_deal_ok(const int32_t *b, const int8_t *o, const float *w, int K, int n_rounds, const int32_t *num_buckets) {
    for (int i = 0; i < K * 2 * n_rounds; i++)
        if (b[i] < 0 || b[i] >= num_buckets[i % n_rounds]) return 0;
    for (int k = 0; k < K; k++)
        if (o[k] < -1 || o[k] > 1 || !(w[k] >= 0.0f)) return 0;
    return -1;
}

/* the checks and the context both entry points share: -1 ok, else their error code */
static int64_t mc_begin(mc_ctx *c, int64_t n_nodes, const int8_t *kind, const int8_t *player, const int8_t *round,
                        const int32_t *first_child, const int8_t *num_children, const int64_t *slot,
                        const float *fold_value0, const float *stake, int n_rounds, const int32_t *num_buckets,
                        int split_round, int K, int64_t n_deals, const int32_t *buckets, const int8_t *outcome,
                        const float *weight, int64_t n_slots) {
    int64_t bad = ds_mccfr_check_tree(n_nodes, kind, player, round, first_child, num_children, slot, fold_value0, stake,
                                      n_rounds, num_buckets, n_slots);
    if (bad != -1) return bad == -2 ? -2 : -3;
    if (n_deals < 0 || K < 1 || split_round < 1 || split_round > n_rounds || (split_round == n_rounds && K != 1)) return -2;
    for (int64_t d = 0; d < n_deals; d++)
        if (mc_deal_ok(buckets + d * K * 2 * n_rounds, outcome + d * K, weight + d * K, K, n_rounds, num_buckets) != -1)
            return d;
    *c = (mc_ctx){0};
    c->kind = kind, c->player = player, c->round = round, c->num_children = num_children, c->first_child = first_child;
    c->slot = slot, c->fold_value0 = fold_value0, c->stake = stake;
    c->n_rounds = n_rounds, c->split_round = split_round, c->K = K, c->k = -1, c->scale = 1.0;
    return -1;
}

/* deal d's continuations */
static inline void mc_at_deal(mc_ctx *c, int64_t d, const int32_t *buckets, const int8_t *outcome, const float *weight) {
    c->deal = d;
    c->bucket = buckets + d * c->K * 2 * c->n_rounds;
    c->outcome = outcome + d * c->K;
    c->weight = weight + d * c->K;
}

int64_t ds_mccfr_iterate(int64_t n_nodes, const int8_t *kind, const int8_t *player, const int8_t *round,
                         const int32_t *first_child, const int8_t *num_children, const int64_t *slot,
                         const float *fold_value0, const float *stake, int n_rounds, const int32_t *num_buckets,
                         int split_round, int K, int64_t n_deals, const int32_t *buckets, const int8_t *outcome,
                         const float *weight, int64_t n_slots, const float *regrets, float *regret_out,
                         float *strategy_sum, int mode, uint64_t seed, int64_t cap_exits, int32_t *exit_node,
                         int8_t *exit_player, int64_t *exit_deal, int64_t *n_exits, const double *exit_values,
                         int64_t n_exit_values, double *root_values) {
    if (mode < MC_FULL || mode > MC_EVAL) return -2;
    if ((mode == MC_COLLECT && (cap_exits < 0 || !n_exits)) || (mode == MC_REPLAY && !exit_values)) return -2;
    if ((mode == MC_FULL || mode == MC_REPLAY) && (!regret_out || !strategy_sum)) return -2;
    mc_ctx c;
    int64_t rc = mc_begin(&c, n_nodes, kind, player, round, first_child, num_children, slot, fold_value0, stake, n_rounds,
                          num_buckets, split_round, K, n_deals, buckets, outcome, weight, n_slots);
    if (rc != -1) return rc;
    c.mode = mode, c.regrets = regrets, c.regret_out = regret_out, c.strategy_sum = strategy_sum, c.rng = seed;
    c.cap_exits = cap_exits, c.exit_node = exit_node, c.exit_player = exit_player, c.exit_deal = exit_deal;
    c.exit_values = exit_values, c.n_exit_values = n_exit_values;
    for (int64_t d = 0; d < n_deals; d++) {
        mc_at_deal(&c, d, buckets, outcome, weight);
        for (int p = 0; p < 2; p++) {
            double v = mc_traverse(&c, 0, p);
            if (root_values) root_values[d * 2 + p] = v;
        }
    }
    if (mode == MC_COLLECT) *n_exits = c.n_exits;
    if (mode == MC_REPLAY && (c.overflow || c.next_exit != n_exit_values)) return -4;
    return c.overflow ? -5 : -1;
}

int64_t ds_mccfr_continue(int64_t n_nodes, const int8_t *kind, const int8_t *player, const int8_t *round,
                          const int32_t *first_child, const int8_t *num_children, const int64_t *slot,
                          const float *fold_value0, const float *stake, int n_rounds, const int32_t *num_buckets,
                          int split_round, int K, int64_t n_deals, const int32_t *buckets, const int8_t *outcome,
                          const float *weight, int64_t n_slots, float *regrets, float *strategy_sum, int cluster,
                          uint64_t seed, int64_t n_exits, const int32_t *exit_node, const int8_t *exit_player,
                          const int64_t *exit_deal, double *values) {
    if (cluster < 0 || cluster >= K || split_round >= n_rounds) return -2;
    mc_ctx c;
    int64_t rc = mc_begin(&c, n_nodes, kind, player, round, first_child, num_children, slot, fold_value0, stake, n_rounds,
                          num_buckets, split_round, K, n_deals, buckets, outcome, weight, n_slots);
    if (rc != -1) return rc;
    c.mode = MC_FULL, c.regrets = regrets, c.regret_out = regrets, c.strategy_sum = strategy_sum, c.rng = seed;
    for (int64_t e = 0; e < n_exits; e++) {
        int64_t d = exit_deal[e];
        int32_t n = exit_node[e];
        if (d < 0 || d >= n_deals || n < 0 || n >= n_nodes || kind[n] != MC_CHANCE || (exit_player[e] != 0 && exit_player[e] != 1))
            return -6;
        mc_at_deal(&c, d, buckets, outcome, weight);
        c.k = cluster;
        c.scale = c.weight[cluster] / mc_total_weight(&c);
        values[e] = c.weight[cluster] > 0.0f ? mc_traverse(&c, first_child[n], exit_player[e]) : 0.0;
    }
    return -1;
}
