/* A CFR iteration as one C call (see native.h, ds_cfr_program): the kernel calls of one
 * iteration of agent/solver/cfr.py's alternating loop, recorded once as a list of ops with
 * their arguments (native/cfr_kernels.py, SolverKernels.iteration_program) and replayed with
 * each iteration's weights. The kernels and their arithmetic are those of cfr_kernels.c and
 * terminal.c, in the same order, so the results are those of the Python loop to the bit; what
 * goes is the Python call per kernel (about 50 per iteration on a river spot: half its time).
 * Every op's indices are checked by its kernel, as when called from Python. */
#include <stdint.h>
#include <string.h>

#include "native.h"

enum { PR_OK = -1, PR_BAD_ARGS = -2 };

static int64_t run_op(const ds_op *o, float w, float pos, float neg, int threads) {
    const int64_t *n = o->n;
    const void *const *p = o->p;
    switch (o->op) {
    case DS_OP_COPY:
        if (n[0] < 0 || !p[0] || !p[1]) return PR_BAD_ARGS;
        memcpy((float *)p[1], (const float *)p[0], (size_t)n[0] * sizeof(float));
        return PR_OK;
    case DS_OP_ZERO:
        if (n[0] < 0 || !p[1]) return PR_BAD_ARGS;
        memset((float *)p[1], 0, (size_t)n[0] * sizeof(float));
        return PR_OK;
    case DS_OP_FORWARD:
        return ds_cfr_forward(n[0], n[1], p[0], p[1], p[2], n[2], p[3], n[3], (float *)p[4], threads);
    case DS_OP_BACKWARD:
        return ds_cfr_backward(n[0], n[1], p[0], p[1], p[2], p[3], p[4], n[2], (float *)p[5], n[3], (int)n[4],
                               threads);
    case DS_OP_TERMINAL:
        return ds_terminal_rows_product((int)n[0], (int)n[1], (int)n[2], p[0], n[3], p[1], p[2], p[3], n[4], NULL,
                                        NULL, 0, p[4], (float *)p[5], p[6], n[5], threads);
    case DS_OP_AVERAGE:
        if (w <= 0.0f) return PR_OK;
        return ds_cfr_average(n[0], n[1], n[2], p[0], p[1], p[2], n[3], w, (float *)p[3], threads);
    case DS_OP_ADD_ROWS:
        if (w <= 0.0f) return PR_OK;
        return ds_cfr_add_rows(n[0], n[1], p[0], p[1], n[2], w, (float *)p[2], threads);
    case DS_OP_REGRETS_STRATEGY:
        return ds_cfr_regrets_strategy(n[0], n[1], n[2], p[0], p[1], p[2], p[3], n[3], (float *)p[4],
                                       (float *)p[5], (int)n[4], pos, neg, threads);
    case DS_OP_MAX_ROWS:
        return ds_cfr_max_rows(n[0], n[1], n[2], p[0], p[1], p[2], (float *)p[3], n[3]);
    default:
        return PR_BAD_ARGS;
    }
}

int64_t ds_cfr_program(const ds_op *ops, int64_t n_ops, float w, float pos, float neg, int threads,
                       int64_t *failed_op) {
    if (n_ops < 0 || (n_ops > 0 && !ops) || !failed_op) return PR_BAD_ARGS;
    for (int64_t i = 0; i < n_ops; i++) {
        const int64_t code = run_op(&ops[i], w, pos, neg, threads);
        if (code != PR_OK) {
            *failed_op = i;
            return code;
        }
    }
    *failed_op = -1;
    return PR_OK;
}
