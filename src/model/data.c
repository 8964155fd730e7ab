/* mn_data: the state q, every joint's world frame, and the solvers' arena, in one block. */
#include "model/model_internal.h"

#include <stdlib.h>
#include <string.h>

static size_t align16(size_t n) { return (n + 15u) & ~(size_t)15u; }

/* Enough for every solver of the library on this model: a few dense (6 + nv)^2 systems
 * plus per-joint scratch. */
static size_t default_arena(const mn_model* m) {
    size_t nv = (size_t)m->nv + 6, nj = (size_t)m->njoint;
    return 256 * 1024 + 16 * nv * nv * sizeof(double) + 64 * nj * sizeof(double) * 16;
}

mn_data* mn_data_create(const mn_model* m, size_t arena_bytes) {
    if (!m) return NULL;
    if (arena_bytes == 0) arena_bytes = default_arena(m);
    size_t qbytes = align16((size_t)(m->nq ? m->nq : 1) * sizeof(double));
    size_t xbytes = align16((size_t)m->njoint * sizeof(mn_xform));
    size_t total = qbytes + xbytes + arena_bytes + 16;
    mn_data* d = calloc(1, sizeof *d);
    unsigned char* block = calloc(1, total);
    if (!d || !block) {
        free(d);
        free(block);
        return NULL;
    }
    unsigned char* p = (unsigned char*)(((uintptr_t)block + 15u) & ~(uintptr_t)15u);
    d->block = block;
    d->nbytes = total;
    d->njoint = m->njoint;
    d->nq = m->nq;
    d->nv = m->nv;
    d->q = (double*)p;
    d->xf = (mn_xform*)(p + qbytes);
    mn_arena_init(&d->arena, p + qbytes + xbytes, arena_bytes);
    mn_data_reset(m, d);
    return d;
}

void mn_data_destroy(mn_data* d) {
    if (!d) return;
    free(d->block);
    free(d);
}

void mn_data_reset(const mn_model* m, mn_data* d) {
    memcpy(d->q, m->q0, (size_t)m->nq * sizeof(double));
    mn_fk(m, d);
}

void mn_data_copy(const mn_model* m, mn_data* dst, const mn_data* src) {
    memcpy(dst->q, src->q, (size_t)m->nq * sizeof(double));
    memcpy(dst->xf, src->xf, (size_t)m->njoint * sizeof(mn_xform));
}
