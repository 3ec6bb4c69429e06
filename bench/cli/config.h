/* `opcost run` options: parsed once (getopt_long) into the plan as asked,
 * validated with errors that name the option and the rule. What the
 * options leave to the device (paths, variants, sample length, baseline)
 * the engine settles (opcost_plan_settle, plan.h). */
#ifndef OPCOST_CONFIG_H
#define OPCOST_CONFIG_H

#include "plan.h"
#include "registry.h"
#include "variants.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Defaults, then argv (argv[0] is "run"): the plan as asked, not yet
 * settled. Returns 0; 1 after --help (text printed); -1 with the error in
 * err. */
int opcost_config_parse(opcost_plan *plan, int argc, char **argv, char *err,
                        size_t errlen);

void opcost_config_usage(FILE *out);

#endif
