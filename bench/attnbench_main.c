/* attnbench_main.c — the attnbench executable: its command line is
 * attnbench.c's. */
#include "attnbench.h"

int main(int argc, char **argv) { return attnbench_main(argc, argv, true); }
