/* The console of a run from the command line (opcost run, opcost ab): the
 * header, progress, messages and settlement of the pipeline's hooks
 * (pipeline.h), alike for every command; what a command says at the end
 * is its own. */
#ifndef OPCOST_CONSOLE_H
#define OPCOST_CONSOLE_H

#include "pipeline.h"

typedef struct opcost_console {
    const char *command; /* "opcost run": each message's prefix */
    /* the command's summary of the rows written, before the line that
     * says where they went */
    void (*summarize)(void *ctx, const opcost_result *rows, size_t n);
    void *ctx; /* summarize's */
} opcost_console;

/* The pipeline's hooks that print to this console (which they point to:
 * it outlives the run). */
opcost_run_hooks opcost_console_hooks(opcost_console *console);

#endif
