/* What an A/B results file says (opcost ab's rows: side base and new,
 * each new row's paired ratio against its base twin): per distribution,
 * op, dtype, layout, path and variant the weighted expected cost ratio
 * new / base with its interval (Holm-corrected over the groups), then
 * every point's ratio and verdict. A pure reader: the same from the rows
 * of a run just measured and from a file. */
#ifndef OPCOST_AB_REPORT_H
#define OPCOST_AB_REPORT_H

#include "paired.h"
#include "row.h"

#include <stddef.h>
#include <stdio.h>

typedef struct opcost_ab_group {
    const opcost_result *key; /* a new row of the group */
    size_t points;            /* new rows in it, and rows of no side (points an
                                 interrupted run skipped before either side ran) */
    size_t paired;            /* of them with a ratio */
    size_t broken; /* of them not ok while their base twin is: regressions */
    opcost_paired ratio;    /* sum freq base_i r_i / sum freq base_i */
    double p_holm;          /* over the groups */
    opcost_verdict verdict; /* NONE unless every point has a ratio */
} opcost_ab_group;

/* A group with a point not paired on both sides (interrupted, a side that
 * went away, a base not ok): no verdict, and a gate says `incomplete`. */
#define OPCOST_AB_INCOMPLETE(g) ((g)->paired < (g)->points)

typedef struct opcost_ab_counts {
    size_t rows, slower, faster, same, unsure, none;
    size_t broken;          /* new rows not ok whose base twin is ok */
    size_t paired;          /* new rows with a ratio */
    size_t base_not_ok;     /* rows without one whose base twin is not ok */
    size_t new_not_ok;      /* of the rest, new rows not ok */
    size_t unsided;         /* points that neither side ran (skipped) */
    size_t unsettled;       /* new rows of a journal (results_csv.h) */
    double median_ci95_rel; /* over the rows with a ratio */
    double median_ratio;
} opcost_ab_counts;

/* The groups of rows[0..n-1] (malloc'd into *groups; free it). 0, or -1
 * when memory ran out. */
int opcost_ab_groups(const opcost_result *rows, size_t n, double threshold,
                     double alpha, opcost_ab_group **groups, size_t *ngroups);

/* The counts of the new rows' verdicts (rows counts the points of no
 * side too). */
opcost_ab_counts opcost_ab_count(const opcost_result *rows, size_t n);

/* The table: per group its weighted ratio and verdict, then every point's;
 * then the counts. Returns the counts. */
opcost_ab_counts opcost_ab_report(FILE *f, const opcost_result *rows, size_t n,
                                  double threshold, double alpha);

#endif
