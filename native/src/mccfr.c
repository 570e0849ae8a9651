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
 * Discounting (linear CFR) is left to the caller, who scales both accumulators between calls. */
#include <stdint.h>

#include "native.h"

#define MC_MAX_ACTIONS 32

enum { MC_DECISION = 0, MC_FOLD = 1, MC_SHOWDOWN = 2, MC_CHANCE = 3 };

typedef struct {
    const int8_t *kind, *player, *round, *num_children;
    const int32_t *first_child;
    const int64_t *slot;
    const float *fold_value0, *stake;
    const int32_t *bucket; /* this deal's [2][n_rounds] */
    int n_rounds;
    int outcome;
    float *regrets, *strategy_sum;
    uint64_t rng;
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

static double mc_traverse(mc_ctx *c, int32_t n, int p) {
    switch (c->kind[n]) {
    case MC_FOLD:
        return p == 0 ? c->fold_value0[n] : -c->fold_value0[n];
    case MC_SHOWDOWN: {
        double v0 = c->outcome * (double)c->stake[n];
        return p == 0 ? v0 : -v0;
    }
    case MC_CHANCE:
        return mc_traverse(c, c->first_child[n], p);
    default:
        break;
    }
    int q = c->player[n], A = c->num_children[n];
    int64_t base = c->slot[n] + (int64_t)c->bucket[q * c->n_rounds + c->round[n]] * A;
    double s[MC_MAX_ACTIONS];
    mc_strategy(c->regrets + base, A, s);
    if (q == p) {
        double v[MC_MAX_ACTIONS], ev = 0.0;
        for (int a = 0; a < A; a++) {
            v[a] = mc_traverse(c, c->first_child[n] + a, p);
            ev += s[a] * v[a];
        }
        for (int a = 0; a < A; a++) c->regrets[base + a] += (float)(v[a] - ev);
        return ev;
    }
    for (int a = 0; a < A; a++) c->strategy_sum[base + a] += (float)s[a];
    double u = mc_uniform(&c->rng), acc = s[0];
    int a = 0;
    while (u >= acc && a < A - 1) acc += s[++a];
    return mc_traverse(c, c->first_child[n] + a, p);
}

int64_t ds_mccfr_check_tree(int64_t n_nodes, const int8_t *kind, const int8_t *player, const int8_t *round,
                            const int32_t *first_child, const int8_t *num_children, const int64_t *slot, int n_rounds,
                            const int32_t *num_buckets, int64_t n_slots) {
    if (n_nodes < 1 || n_rounds < 1 || n_rounds > 8 || n_slots < 0) return -2;
    for (int r = 0; r < n_rounds; r++)
        if (num_buckets[r] < 1) return -2;
    for (int64_t n = 0; n < n_nodes; n++) {
        int k = kind[n];
        if (k == MC_FOLD || k == MC_SHOWDOWN) continue;
        if (k == MC_CHANCE) {
            if (first_child[n] <= n || first_child[n] >= n_nodes) return n;
            continue;
        }
        if (k != MC_DECISION) return n;
        int A = num_children[n];
        if (A < 1 || A > MC_MAX_ACTIONS || (player[n] != 0 && player[n] != 1)) return n;
        if (round[n] < 0 || round[n] >= n_rounds) return n;
        if (first_child[n] <= n || (int64_t)first_child[n] + A > n_nodes) return n;
        if (slot[n] < 0 || slot[n] + (int64_t)num_buckets[(int)round[n]] * A > n_slots) return n;
    }
    return -1;
}

int64_t ds_mccfr_run(int64_t n_nodes, const int8_t *kind, const int8_t *player, const int8_t *round,
                     const int32_t *first_child, const int8_t *num_children, const int64_t *slot, const float *fold_value0,
                     const float *stake, int n_rounds, const int32_t *num_buckets, int64_t n_deals,
                     const int32_t *buckets, const int8_t *outcome, int64_t n_slots, float *regrets,
                     float *strategy_sum, uint64_t seed) {
    int64_t bad = ds_mccfr_check_tree(n_nodes, kind, player, round, first_child, num_children, slot, n_rounds,
                                      num_buckets, n_slots);
    if (bad != -1) return bad == -2 ? -2 : -3;
    if (n_deals < 0) return -2;
    mc_ctx c = {kind, player, round, num_children, first_child, slot, fold_value0, stake, 0, n_rounds, 0,
                regrets, strategy_sum, seed};
    for (int64_t d = 0; d < n_deals; d++) {
        const int32_t *b = buckets + d * 2 * n_rounds;
        for (int i = 0; i < 2 * n_rounds; i++)
            if (b[i] < 0 || b[i] >= num_buckets[i % n_rounds]) return d;
        if (outcome[d] < -1 || outcome[d] > 1) return d;
        c.bucket = b;
        c.outcome = outcome[d];
        for (int p = 0; p < 2; p++) mc_traverse(&c, 0, p);
    }
    return -1;
}
