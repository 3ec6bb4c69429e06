/* `opcost targets`: the CPU performance targets on results CSVs. */
#ifndef OPCOST_TARGETS_H
#define OPCOST_TARGETS_H

int opcost_targets_main(int argc, char **argv);

#endif
