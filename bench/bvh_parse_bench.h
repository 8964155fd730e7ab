/* BVH parsing throughput, for `marionette bench` commands. */
#ifndef MN_BVH_PARSE_BENCH_H
#define MN_BVH_PARSE_BENCH_H

/* Reads the file at path into memory once, then parses it with mn_bvh_read_mem (model and
 * motion) several times and returns the median throughput in MB/s (10^6 bytes per
 * second). Returns a negative number when the file cannot be read or parsed. */
double mn_bench_bvh_parse_mb_s(const char* path);

#endif
