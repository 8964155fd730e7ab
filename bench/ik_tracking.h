/* marionette bench ik --tracking-batch: tracking solves per second (ik_tracking.c). Called
 * by `marionette bench ik` when --tracking-batch is given; argv is that command's. Returns
 * an exit status. */
#ifndef MN_BENCH_IK_TRACKING_H
#define MN_BENCH_IK_TRACKING_H

int mn_bench_ik_tracking(int argc, char** argv);

#endif
