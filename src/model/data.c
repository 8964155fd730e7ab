/* mn_data: the state q, every joint's world frame, and the solvers' arena, in one block. */
#include "model/model_internal.h"

#include <stdlib.h>
#include <string.h>

static size_t align16(size_t n) {
    return (n + 15u) & ~(size_t)15u;
}

/* Enough for every solver of the library on this model: a few dense (6 + nv)^2 systems
 * plus per-joint scratch. The dense part is capped at MN_DATA_DENSE_MAX: FK, sampling and
 * the chain solvers need memory linear in the figure, and a figure of tens of thousands of
 * DOFs must not ask for gigabytes it never touches (a solver that needs more than the cap
 * says MN_ERR_NOMEM; ask mn_data_create for a larger arena). Below the cap (about 1,400
 * DOFs) the size is what it always was. */
static size_t default_arena(const mn_model* m) {
    size_t nv = (size_t)m->nv + 6, nj = (size_t)m->njoint;
    double dense = 16.0 * (double)nv * (double)nv * (double)sizeof(double);
    size_t dense_bytes = dense < (double)MN_DATA_DENSE_MAX ? (size_t)dense : MN_DATA_DENSE_MAX;
    return 256 * 1024 + dense_bytes + 64 * nj * sizeof(double) * 16;
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
