/* The console's peer section (report_peers.c). */
#ifndef OPCOST_REPORT_PEERS_H
#define OPCOST_REPORT_PEERS_H

#include "row.h"

#include <stdio.h>

/* Per distribution, op, dtype and layout with peer rows: each peer's
 * expected cost per call (shapes weighted by freq, over those where both
 * it and rowops' op of the same form were timed) against rowops', their
 * paired ratio with its 95 % interval, and the points where the peer's
 * verdict against rowops was faster. Nothing without peer rows. */
void opcost_report_peers(FILE *f, const opcost_result *rows, size_t n);

#endif
