/* libFuzzer target: opcost_shape_set_load on arbitrary bytes. */
#include "fuzz_common.h"

#include "shape_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size);
    opcost_shape_set set;
    char err[4096] = "";
    if (opcost_shape_set_load(path, &set, err, sizeof err) == 0) {
        /* A success must honour the header's promise: at least one row. */
        if (set.count < 1 || !set.rows || !set.comments)
            abort();
        opcost_shape_set_free(&set);
        return 0;
    }
    fuzz_check_error(path, err);
    return 0;
}
