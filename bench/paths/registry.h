/* The benchmark paths, one row each (registry.c): every path the suite
 * knows, in the order a run and `opcost list` give them. */
#ifndef OPCOST_REGISTRY_H
#define OPCOST_REGISTRY_H

#include "path.h"
#include "variants.h"

#include <stddef.h>

size_t opcost_path_count(void);
/* The paths as one array of opcost_path_count() (what a plan is settled
 * from: opcost_plan.all_paths). */
const opcost_path *const *opcost_path_table(void);
const opcost_path *opcost_path_at(size_t i);
const opcost_path *opcost_path_find(const char *name);

#endif
