/* A slowdown selected at run time, for the checks of opcost ab: with
 * ROWOPS_TEST_SLOWDOWN=F (a fraction, 0 < F <= 1) the fast CPU kernels
 * spin F of their own time after each range of rows they ran. Two
 * processes of one build, one with it, are then a build that is slower
 * by F and one that is not, with the same code in the same places: what
 * the pairing says of them is the pairing's, not a change of code
 * placement's. Unset, 0 or anything else: no spin (one branch a range). */
/* Test-only, likewise: with ROWOPS_TEST_WRONG_SCALE=S (0 < S, S != 1)
 * the fast CPU kernels multiply each output row they wrote by S, a build
 * that computes wrong results (its rows verify `wrong`) with the same
 * code: the checks of opcost ab give one side of `--base B --new B` it.
 * Never set it outside a test. Unset or anything else: no scaling. */
#ifndef ROWOPS_TEST_SLOWDOWN_H
#define ROWOPS_TEST_SLOWDOWN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROWOPS_TEST_SLOWDOWN_ENV "ROWOPS_TEST_SLOWDOWN"

/* The fraction asked for, read once; 0 when none. */
double rowops_test_slowdown(void);

/* A monotonic clock in ns, where the spin needs one (0 when none asked). */
int64_t rowops_test_slowdown_start(void);

/* Spins F of the time since start (rowops_test_slowdown_start's). */
void rowops_test_slowdown_spin(int64_t start);

#define ROWOPS_TEST_WRONG_SCALE_ENV "ROWOPS_TEST_WRONG_SCALE"

/* The scale asked for, read once; 1 when none. */
double rowops_test_wrong_scale(void);

/* Multiplies rows [row_begin, row_end) of c's out by the scale (test
 * only; nothing when none is asked). */
struct rowops_call;
void rowops_test_wrong_rows(const struct rowops_call *c, int64_t row_begin,
                            int64_t row_end);

#ifdef __cplusplus
}
#endif

#endif
