/* `opcost check`: the schema check of results files (analysis/check.c). */
#ifndef OPCOST_CHECK_H
#define OPCOST_CHECK_H

/* argv[0] is "check". Exit status: 0 ok; 2 a file or sidecar is
 * malformed (or bad usage); 1 --require-ok found a row that is not ok. */
int opcost_check_main(int argc, char **argv);

#endif
