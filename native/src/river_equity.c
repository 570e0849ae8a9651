/* River equity of dealt hands (the blueprint's river buckets): each position's share of the pot against a
 * hand drawn uniformly from the cards that the board and its own cards leave, ties counting half, the way
 * the player sees it (not knowing the opponent's cards). One deal's 1081 possible holdings off the board are
 * evaluated once and shared by both positions. */
#include <stdint.h>

#include "native.h"

int64_t ds_river_equity_deals(int64_t n, const uint8_t *cards, float *out) {
    if (n < 0 || ds_eval_init() != 0) return -2;
    uint16_t strength[1081];
    uint8_t first[1081], second[1081];
    for (int64_t d = 0; d < n; d++) {
        const uint8_t *row = cards + d * 9; /* position 0's two cards, position 1's two, the board's five */
        uint64_t seen = 0;
        for (int i = 0; i < 9; i++) {
            if (row[i] >= 52 || (seen >> row[i] & 1)) return d;
            seen |= 1ULL << row[i];
        }
        uint64_t on_board = 0;
        for (int i = 4; i < 9; i++) on_board |= 1ULL << row[i];
        uint8_t hand[7];
        for (int i = 0; i < 5; i++) hand[2 + i] = row[4 + i];
        int m = 0;
        for (int a = 0; a < 52; a++) {
            if (on_board >> a & 1) continue;
            for (int b = a + 1; b < 52; b++) {
                if (on_board >> b & 1) continue;
                hand[0] = (uint8_t)a, hand[1] = (uint8_t)b;
                strength[m] = ds_eval_cards(hand, 7);
                first[m] = (uint8_t)a, second[m] = (uint8_t)b;
                m++;
            }
        }
        for (int p = 0; p < 2; p++) {
            uint8_t x = row[2 * p], y = row[2 * p + 1];
            hand[0] = x, hand[1] = y;
            uint16_t own = ds_eval_cards(hand, 7);
            double wins = 0.0, count = 0.0;
            for (int k = 0; k < m; k++) {
                if (first[k] == x || first[k] == y || second[k] == x || second[k] == y) continue;
                count += 1.0;
                wins += own > strength[k] ? 1.0 : own == strength[k] ? 0.5 : 0.0;
            }
            out[d * 2 + p] = (float)(wins / count);
        }
    }
    return -1;
}
