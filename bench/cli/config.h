/* `opcost run` options: parsed once (getopt_long), validated with errors
 * that name the option and the rule, read-only afterwards. */
#ifndef OPCOST_CONFIG_H
#define OPCOST_CONFIG_H

#include "plan.h"
#include "registry.h"
#include "variants.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Defaults, then argv (argv[0] is "run"). Returns 0; 1 after --help (text
 * printed); -1 with the error in err. */
int opcost_config_parse(opcost_plan *cfg, int argc, char **argv, char *err,
                        size_t errlen);

void opcost_config_usage(FILE *out);

/* Settles the device (cuda: 1 where a GPU was found and --device was not
 * given) and, without --paths, selects the default paths of that device. */
void opcost_config_set_device(opcost_plan *cfg, int cuda);

#endif
