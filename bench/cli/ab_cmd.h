/* `opcost ab` and `opcost worker` (ab.c). */
#ifndef OPCOST_AB_CMD_H
#define OPCOST_AB_CMD_H

int opcost_ab_main(int argc, char **argv);
int opcost_worker_main(int argc, char **argv);

#endif
