/* A slowdown selected at run time, for the checks of opcost ab: with
 * ROWOPS_TEST_SLOWDOWN=F (a fraction, 0 < F <= 1) the fast CPU kernels
 * spin F of their own time after each range of rows they ran. Two
 * processes of one build, one with it, are then a build that is slower
 * by F and one that is not, with the same code in the same places: what
 * the pairing says of them is the pairing's, not a change of code
 * placement's. Unset, 0 or anything else: no spin (one branch a range). */
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

#ifdef __cplusplus
}
#endif

#endif
