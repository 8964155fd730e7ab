/* Compressed clips: the error animation compressors are measured by (the Animation Compression
 * Library's object-space virtual vertices; clip.h). */
#include <stdlib.h>

#include "clip_internal.h"

/* Virtual vertices of every joint of d: nv points (along the joint's x, y and, when nv is 3,
 * z axes) x 3 numbers per joint. */
void mn_clip_vertices(const mn_model* m, const mn_data* d, double shell, int nv, double* out) {
    for (int j = 0; j < m->njoint; j++) {
        const mn_xform* x = &d->xf[j];
        const double p[3] = {x->p.x, x->p.y, x->p.z};
        for (int a = 0; a < nv; a++) /* the joint's axes: columns of R */
            for (int r = 0; r < 3; r++)
                out[3 * nv * j + 3 * a + r] = p[r] + shell * x->R.m[3 * r + a];
    }
}

/* The error of clip c against the take's vertices V (nframes x njoint x 3 nv). */
double mn_clip_error_v(const mn_clip* c, mn_data* d, const double* V, double shell, int nv,
                       double* tmp, int* wj, int* wf, double stop) {
    const mn_model* m = c->m;
    double worst = -1;
    for (int f = 0; f < c->nframes; f++) {
        mn_clip_sample(c, f, d->q);
        mn_fk(m, d);
        mn_clip_vertices(m, d, shell, nv, tmp);
        const double* r = V + (size_t)f * (size_t)m->njoint * 3 * nv;
        for (int j = 0; j < m->njoint; j++)
            for (int a = 0; a < nv; a++) {
                const double* x = tmp + 3 * nv * j + 3 * a;
                const double* y = r + 3 * nv * j + 3 * a;
                double e = sqrt((x[0] - y[0]) * (x[0] - y[0]) + (x[1] - y[1]) * (x[1] - y[1]) +
                                (x[2] - y[2]) * (x[2] - y[2]));
                if (e > worst) {
                    worst = e;
                    if (wj) *wj = j;
                    if (wf) *wf = f;
                }
            }
        if (worst > stop) break;
    }
    return worst;
}

double* mn_clip_take_vertices(const mn_model* m, mn_data* d, const double* q, int n, double shell,
                              int nv) {
    double* V = malloc(sizeof(double) * (size_t)n * (size_t)m->njoint * 3 * nv + 1);
    if (!V) return NULL;
    for (int f = 0; f < n; f++) {
        memcpy(d->q, q + (size_t)f * (size_t)m->nq, sizeof(double) * (size_t)m->nq);
        mn_fk(m, d);
        mn_clip_vertices(m, d, shell, nv, V + (size_t)f * (size_t)m->njoint * 3 * nv);
    }
    return V;
}

mn_status mn_clip_error_vertices(const mn_clip* c, const double* q, int nframes, double shell,
                                 int vertices, double* max_error, int* worst_joint,
                                 int* worst_frame) {
    if (!c || !q || nframes != c->nframes || !(shell >= 0) || (vertices != 2 && vertices != 3))
        return MN_ERR_ARG;
    mn_data* d = mn_data_create(c->m, 0);
    double* V = d ? mn_clip_take_vertices(c->m, d, q, nframes, shell, vertices) : NULL;
    double* tmp = malloc(sizeof(double) * (size_t)c->m->njoint * 3 * vertices + 1);
    if (!d || !V || !tmp) {
        mn_data_destroy(d), free(V), free(tmp);
        return MN_ERR_NOMEM;
    }
    double e = mn_clip_error_v(c, d, V, shell, vertices, tmp, worst_joint, worst_frame, INFINITY);
    if (max_error) *max_error = e;
    mn_data_destroy(d), free(V), free(tmp);
    return MN_OK;
}

mn_status mn_clip_error(const mn_clip* c, const double* q, int nframes, double shell,
                        double* max_error, int* worst_joint, int* worst_frame) {
    return mn_clip_error_vertices(c, q, nframes, shell, 3, max_error, worst_joint, worst_frame);
}
