/* marionette bench ik --compare: the experiment of Welman 1993, 4.3 (Fig. 4.4 and 4.5)
 * for every chain IK method. Called by `marionette bench ik` when --compare is given;
 * argv is that command's (argv[0] "ik", "--compare" anywhere). Returns an exit status. */
#ifndef MN_BENCH_IK_COMPARE_H
#define MN_BENCH_IK_COMPARE_H

int mn_bench_ik_compare(int argc, char** argv);

#endif
