/* The host's bandwidth state in each round of a point. Pairing with the
 * probe cancels drift that slows the kernel and the probe alike; these
 * hosts also switch between states that do not: on the Zen 5 host of
 * 2026-12-05 the DRAM probe (fused mix, streamed, 2 threads) ran at 55-60
 * GB/s for spells of 4 to over 30 s and at 95-115 otherwise, and in the
 * slow state the streamed fused float32 kernel read 0.92-0.96 of the probe
 * where it read 0.66-0.74 in the fast one (the ordinary-store kernels
 * 0.69-0.74 against 0.48-0.55). A fraction over a mix of both states moved
 * with the mix: two back-to-back runs differed by 6.3 % at the median.
 *
 * So each probe sample is classed by the median of the probe's samples in
 * the rounds around it (a round's own sample would select its own noise):
 * at full bandwidth where that reaches OPCOST_FULL_BANDWIDTH of the
 * reference (the run's DRAM ceiling of the mix so far, or the point's own
 * best if higher), reduced below it. frac_of_peak then pairs with the
 * rounds at full bandwidth when there are enough of them, and says so.
 * Torch-free: the tests drive it with simulated members. */
#ifndef OPCOST_BANDWIDTH_STATE_H
#define OPCOST_BANDWIDTH_STATE_H

#include "rounds.h"

#include <stddef.h>

/* A round is at full bandwidth from this share of the reference on (the
 * two states measured were 2x apart; the noise within one, +-10 %). */
#define OPCOST_FULL_BANDWIDTH 0.75
/* The probe samples each class rests on: its own and two either side. */
#define OPCOST_STATE_WINDOW 5
/* A call that moves this many bytes streams: its probe measures the
 * memory, not the call's overhead; smaller ones are not classed. */
#define OPCOST_STREAMING_BYTES (16.0 * (1 << 20))
/* Only a call moving this many times the last-level cache is classed and
 * teaches the run its full DRAM bandwidth (and joins the DRAM ceiling):
 * smaller cold calls are partly served by the caches (Zen 5, 32 MiB L3:
 * the probes of 30 MB calls read up to 128 GB/s, of 1-13 MB calls 90-99,
 * where calls of 100-540 MB read 95-117 at full bandwidth). */
#define OPCOST_DRAM_REFERENCE_LLCS 2.0

/* Whether a cold call moving `moved` bytes on a last-level cache of
 * llc_bytes is DRAM-sized in that sense. */
int opcost_bw_dram_sized(double moved, size_t llc_bytes);

typedef enum opcost_bw_state {
    OPCOST_BW_NONE = 0, /* not classed (not streaming from DRAM) */
    OPCOST_BW_FULL,     /* every round used at full bandwidth */
    OPCOST_BW_REDUCED,  /* every round used at reduced bandwidth */
    OPCOST_BW_MIXED,    /* too few of either: all rounds, both states */
    OPCOST_BW_COUNT
} opcost_bw_state;

/* "", "full", "reduced", "mixed": the results' probe_state. */
const char *opcost_bw_state_name(opcost_bw_state s);

typedef struct opcost_bw_split {
    opcost_bw_state state;   /* of the samples in used */
    size_t full, reduced;    /* the probe's samples in each state */
    double reference_gbps;   /* what the share is of */
    double best_rolled_gbps; /* the highest window median (NAN: none) */
    double full_gbps;        /* median of the full samples (NAN: none) */
    double reduced_gbps;     /* median of the reduced ones (NAN: none) */
    opcost_member used;      /* the probe samples frac_of_peak pairs with */
} opcost_bw_split;

/* Splits the probe's samples (each moving `bytes`) by state against
 * reference_gbps, or the probe's own highest window median where that is
 * higher (0: that alone; NAN: not classed, every sample used, state
 * NONE). Uses
 * the full samples when there are OPCOST_PAIRED_MIN, else the reduced
 * ones when there are that many, else all. 0, or -1 when memory ran out
 * (out->used then empty). Free with opcost_bw_split_free. */
int opcost_bw_split_probe(const opcost_member *probe, double bytes,
                          double reference_gbps, opcost_bw_split *out);

void opcost_bw_split_free(opcost_bw_split *s);

#endif
