/* The small multiplier system of Welman 5.2.3-5.2.4 and its solution.
 *
 * Rows of the constraint Jacobian (and of soft goals such as drags) are stacked in block
 * order; A = J K J^T is formed from the sparse blocks (a row is scattered into a dense
 * vector once, then dotted with the sparse rows before it), and
 *
 *     (A + D) lambda = b,    q' += K J^T lambda                               (eq. 5.5-5.6)
 *
 * is solved with D a diagonal of squared dampings (zero for hard constraints). Cholesky is
 * tried first; when it fails or its pivots spread by more than rcond (the system is
 * ill-conditioned, e.g. conflicting or redundant constraints), the truncated SVD of
 * 5.2.4 is used instead, which drops the ill-conditioned directions. */
#include "constrain/csys_internal.h"

#include <marionette/linalg.h>

#include <string.h>

void mn_csys_build_blocks(mn_csys* s, int with_drags, int by_priority, double beta,
                          double damping) {
    int n = 0, row = 0;
    for (int i = 0; i < s->nc; i++) {
        const csys_con* c = &s->c[i];
        if (!c->nrows) continue;
        csys_block* b = &s->blk[n++];
        b->nrows = c->nrows;
        b->ncols = c->ncols;
        b->cols = c->cols;
        b->J = c->J;
        b->scale = sqrt(c->def.weight);
        for (int r = 0; r < c->nrows; r++)
            b->rhs[r] = -beta * c->c[r];
        b->damping = 0;
        b->priority = c->def.priority;
    }
    if (with_drags)
        for (int i = 0; i < s->nh; i++) {
            const csys_handle* h = &s->h[i];
            if (h->drag != DRAG_TARGET) continue;
            csys_block* b = &s->blk[n++];
            b->nrows = 3;
            b->ncols = h->ndof;
            b->cols = h->dofs;
            b->J = h->jac;
            b->scale = sqrt(h->drag_weight);
            b->damping = damping * damping;
            b->priority = h->drag_priority;
            if (h->type == MN_HANDLE_ORIENT) {
                /* turn the frame toward its target: rows d/dq log(R R_t^T) = Jl^-1(e) J_w,
                 * asked to remove the error e, at most half a radian per step */
                mn_vec3 e = mn_rotation_error(&h->rot, &h->drag_R);
                double G[9];
                mn_so3_jl_inv(e, G);
                csys_handle* hw = &s->h[i];
                for (int r = 0; r < 3; r++)
                    for (int k = 0; k < h->ndof; k++)
                        hw->djac[(size_t)r * h->ndof + k] = G[3 * r] * h->jac[k] +
                                                            G[3 * r + 1] * h->jac[h->ndof + k] +
                                                            G[3 * r + 2] * h->jac[2 * h->ndof + k];
                b->J = hw->djac;
                double en = mn_vec3_norm(e);
                if (en > 0.5) e = mn_vec3_scale(e, 0.5 / en);
                b->rhs[0] = -e.x, b->rhs[1] = -e.y, b->rhs[2] = -e.z;
                continue;
            }
            mn_vec3 e = mn_vec3_sub(h->drag_vec, h->pos);
            /* Clamp the error asked of one linearised step (as Buss's clamped DLS does):
             * a far target is approached in steps of a tenth of the figure's size. */
            double en = mn_vec3_norm(e), emax = 0.1 * s->world_scale;
            if (en > emax) e = mn_vec3_scale(e, emax / en);
            b->rhs[0] = e.x, b->rhs[1] = e.y, b->rhs[2] = e.z;
            b->damping = damping * damping;
            b->priority = h->drag_priority;
        }
    if (by_priority) /* stable insertion sort: priority 0 first */
        for (int i = 1; i < n; i++) {
            csys_block t = s->blk[i];
            int j = i - 1;
            while (j >= 0 && s->blk[j].priority > t.priority) {
                s->blk[j + 1] = s->blk[j];
                j--;
            }
            s->blk[j + 1] = t;
        }
    for (int i = 0; i < n; i++) {
        s->blk[i].row0 = row;
        row += s->blk[i].nrows;
    }
    s->nblk = n;
    s->nrows = row;
}

void mn_csys_form_A(mn_csys* s) {
    int M = s->max_rows;
    double* dense = s->dense;
    for (int bi = 0; bi < s->nblk; bi++) {
        const csys_block* B = &s->blk[bi];
        for (int ri = 0; ri < B->nrows; ri++) {
            int i = B->row0 + ri;
            const double* Ji = B->J + (size_t)ri * B->ncols;
            for (int k = 0; k < B->ncols; k++)
                dense[B->cols[k]] = s->K[B->cols[k]] * Ji[k] * B->scale;
            for (int bj = 0; bj <= bi; bj++) {
                const csys_block* C = &s->blk[bj];
                int rend = bj == bi ? ri + 1 : C->nrows;
                for (int rj = 0; rj < rend; rj++) {
                    const double* Jj = C->J + (size_t)rj * C->ncols;
                    double acc = 0;
                    for (int k = 0; k < C->ncols; k++)
                        acc += Jj[k] * dense[C->cols[k]];
                    acc *= C->scale;
                    int j = C->row0 + rj;
                    s->A[(size_t)i * M + j] = acc;
                    s->A[(size_t)j * M + i] = acc;
                }
            }
            for (int k = 0; k < B->ncols; k++)
                dense[B->cols[k]] = 0;
        }
    }
}

void mn_csys_rows_mul(const mn_csys* s, int n, const double* x, double* y) {
    for (int bi = 0; bi < s->nblk; bi++) {
        const csys_block* B = &s->blk[bi];
        for (int r = 0; r < B->nrows; r++) {
            int i = B->row0 + r;
            if (i >= n) return;
            const double* Ji = B->J + (size_t)r * B->ncols;
            double acc = 0;
            for (int k = 0; k < B->ncols; k++)
                acc += Ji[k] * x[B->cols[k]];
            y[i] = acc * B->scale;
        }
    }
}

int mn_csys_solve_rows(mn_csys* s, int n, const double* damp, const double* rhs, double rcond,
                       double* v) {
    if (n <= 0) return 0;
    int M = s->max_rows;
    double* F = s->F;
    for (int i = 0; i < n; i++) {
        memcpy(F + (size_t)i * n, s->A + (size_t)i * M, sizeof(double) * (size_t)n);
        F[(size_t)i * n + i] += damp[i];
    }
    int used_svd = 0;
    mn_status st = mn_cholesky_factor(F, n);
    if (st == MN_OK) {
        double dmin = 1e300, dmax = 0;
        for (int i = 0; i < n; i++) {
            double dd = F[(size_t)i * n + i];
            if (dd < dmin) dmin = dd;
            if (dd > dmax) dmax = dd;
        }
        if (!(dmax > 0) || (dmin / dmax) * (dmin / dmax) < rcond) st = MN_ERR_SINGULAR;
    }
    if (st == MN_OK) {
        memcpy(s->lam, rhs, sizeof(double) * (size_t)n);
        mn_cholesky_solve(F, n, s->lam);
    } else {
        /* Welman 5.2.4: truncated SVD of the left-hand side, small singular values zeroed. */
        used_svd = 1;
        for (int i = 0; i < n; i++) {
            memcpy(F + (size_t)i * n, s->A + (size_t)i * M, sizeof(double) * (size_t)n);
            F[(size_t)i * n + i] += damp[i];
        }
        double rc = rcond > 1e-12 ? sqrt(rcond) : 1e-6;
        if (mn_tsvd_solve(F, n, n, rhs, rc, s->lam, NULL, s->svd_work) != MN_OK)
            memset(s->lam, 0, sizeof(double) * (size_t)n);
    }
    /* q' += K J^T lambda (eq. 5.6, scaled by K as in eq. 5.7) */
    for (int bi = 0; bi < s->nblk; bi++) {
        const csys_block* B = &s->blk[bi];
        for (int r = 0; r < B->nrows; r++) {
            int i = B->row0 + r;
            if (i >= n) break;
            double l = s->lam[i] * B->scale;
            if (l == 0) continue;
            const double* Ji = B->J + (size_t)r * B->ncols;
            for (int k = 0; k < B->ncols; k++)
                v[B->cols[k]] += s->K[B->cols[k]] * Ji[k] * l;
        }
    }
    return used_svd;
}
