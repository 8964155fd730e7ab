/* Two-lane double vectors (GCC/Clang vector extensions: SSE2 on x86-64, scalar code where
 * there is no vector unit), for the library's hot kernels. Private header. */
#ifndef MARIONETTE_CORE_V2D_H
#define MARIONETTE_CORE_V2D_H

typedef double mn_v2d __attribute__((vector_size(16)));

static inline mn_v2d mn_v2d_load(const double* p) {
    mn_v2d v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

static inline void mn_v2d_store(double* p, mn_v2d v) {
    __builtin_memcpy(p, &v, sizeof v);
}

#endif
