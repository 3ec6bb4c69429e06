#include "variant.h"

#include <stddef.h>

const opcost_variant opcost_variant_auto = {
    "auto",
    ROWOPS_IMPL_COUNT,
    NULL,
    0,
    "what the eligibility function picks",
    0,
    NULL};
