/* libFuzzer target: opcost_results_read on arbitrary bytes. */
#include "fuzz_common.h"

#include "results_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_write_input(data, size);
    opcost_result *rows = NULL;
    size_t n = 0;
    char err[4096] = "";
    if (opcost_results_read(path, &rows, &n, err, sizeof err) == 0) {
        /* Every row read back must pass the writer's own check. */
        char msg[1024];
        for (size_t i = 0; i < n; ++i)
            if (opcost_result_check(&rows[i], "row", msg, sizeof msg) != 0) {
                fprintf(stderr, "row %zu read but refused: %s\n", i, msg);
                abort();
            }
        free(rows);
        return 0;
    }
    if (rows || n)
        abort(); /* the header promises NULL and 0 on error */
    fuzz_check_error(path, err);
    return 0;
}
