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
/* CDEF END */

#endif
