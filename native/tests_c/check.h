/* What the C test drivers share: a failure counter, CHECK (prints the failed condition and a message
 * and goes on), and a seeded xorshift64 generator. Define CHECK_SEED before including it. */
#ifndef DS_TESTS_CHECK_H
#define DS_TESTS_CHECK_H

#include <stdint.h>
#include <stdio.h>

#ifndef CHECK_SEED
#define CHECK_SEED UINT64_C(0x9E3779B97F4A7C15)
#endif

static int failures = 0;

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            failures++;                                                        \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
        }                                                                      \
    } while (0)

static uint64_t rng_state = CHECK_SEED;

static uint64_t next_random(void) { /* xorshift64 */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

#endif
