/* Timing helpers for the benchmarks (which report; they never assert a time). */
#ifndef MN_BENCH_UTIL_H
#define MN_BENCH_UTIL_H

#include <stddef.h>

/* Monotonic clock in nanoseconds. */
double mn_bench_now_ns(void);
/* This thread's CPU time in nanoseconds (time the thread was not running is not counted). */
double mn_bench_cpu_ns(void);
/* Median of n values (reorders the array). */
double mn_bench_median(double* v, size_t n);
/* Value at quantile p in [0, 1] (reorders the array). */
double mn_bench_quantile(double* v, size_t n, double p);

#endif
